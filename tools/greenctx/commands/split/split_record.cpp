// SPDX-License-Identifier: Apache-2.0
#include "commands/split/split_record.hpp"

#include <greenctx/plan/group_params.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace greenctx::cli::split_report {
namespace {

using report::cell;
using report::number_format;
using report::yes_no;

const number_format count{"", 0};

cell number(unsigned v) {
  return static_cast<double>(v);
}

// "14 x 8 + 4": the sizes of a group's pieces, largest first.
std::string pieces_text(const sm_group &g) {
  std::map<unsigned, unsigned> sizes; // size -> count
  for (const auto &p : g.pieces)
    ++sizes[p.sm_count()];
  std::string out;
  for (auto it = sizes.rbegin(); it != sizes.rend(); ++it)
    out += (out.empty() ? "" : " + ") + (it->second == 1
                                             ? std::to_string(it->first)
                                             : fmt::format("{} x {}", it->second, it->first));
  return out;
}

} // namespace

bool split_ok(const group_split_result &r, const std::vector<group_check> &checks) {
  return r.all_made() &&
         std::all_of(checks.begin(), checks.end(), [](const group_check &c) { return c.ok(); });
}

report::record split_record(const std::string &request, const group_split_result &r,
                            const std::vector<group_check> &checks,
                            const nlohmann::json &environment) {
  report::record rec;
  rec.kind = "split";
  rec.title = fmt::format("greenctx split '{}' on {}{}", request,
                          report::gpu_described(environment), r.dry_run ? ", dry run" : "");
  rec.environment = report::environment_of(environment);
  rec.config = {{"request", "request", request, {}}, {"dry_run", "dry run", yes_no(r.dry_run), {}}};
  rec.values = {{"made_by",
                 "made by",
                 r.native ? std::string("cuDevSmResourceSplit (native)")
                          : fmt::format("greenctx, from {} split-by-count call{}", r.runs,
                                        r.runs == 1 ? "" : "s"),
                 {}},
                {"native", "native", yes_no(r.native), {}, true},
                {"split_calls", "split-by-count calls", number(r.runs), count, true},
                {"remainder_sms", "remainder", number(r.remainder_sms), {"SMs", 0}},
                {"all_made", "every group made", yes_no(r.all_made()), {}},
                {"ok", "ok", yes_no(split_ok(r, checks)), {}, true},
                {"explanation", "explanation", r.explanation(), {}, true},
                {"advice", "advice", r.advice.empty() ? cell{} : cell{r.advice}, {}, true}};

  const bool checked = !checks.empty();
  report::series groups{
      "groups",
      "Groups",
      {{"group", "#", count},
       {"sm_count", "smCount", count},
       {"coscheduled_sm_count", "cosched", count},
       {"preferred_coscheduled_sm_count", "pref", count},
       {"flags", "flags", count, align::right, true},
       {"backfill", "backfill", {}, align::left},
       {"requested", "asked", count},
       {"obtained", "got", count},
       {"made", "made", {}, align::left, true},
       {"split_call", "call", count},
       {"piece_size", "piece", count},
       {"ignore_sm_coscheduling_pieces", "ignore-cosched pieces", {}, align::left, true},
       {"pieces", "pieces", {}, align::left},
       {"context_sms", "context SMs", count, align::right, true},
       {"sms_used", "used", count, align::right, !checked},
       {"max_active_clusters", "clusters", count, align::right, !checked},
       {"clusters_promised", "promised", count, align::right, !checked},
       {"note", "note", {}, align::left, true}},
      {}};
  for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
    const group_outcome &o = r.outcomes[i];
    const sm_group_params &p = r.params.at(i);
    const auto checked_value = [&](unsigned group_check::*member) {
      return i < checks.size() ? number(checks[i].*member) : cell{};
    };
    const std::string pieces = i < r.groups.size() ? pieces_text(r.groups[i]) : "";
    groups.rows.push_back(
        {number(static_cast<unsigned>(i)), number(p.sm_count), number(p.coscheduled_sm_count),
         number(p.preferred_coscheduled_sm_count), number(p.flags),
         p.flags & sm_group_backfill ? "backfill" : "-",
         o.requested ? number(o.requested) : cell{"all"}, o.ok() ? number(o.obtained) : cell{},
         yes_no(o.ok()), number(o.run), number(o.unit), yes_no(o.ignore_coscheduling_pieces),
         pieces.empty() ? cell{} : cell{pieces}, checked_value(&group_check::context_sms),
         checked_value(&group_check::sms_used), checked_value(&group_check::clusters),
         checked_value(&group_check::clusters_promised), o.note.empty() ? cell{} : cell{o.note}});
  }
  rec.tables.push_back(std::move(groups));

  for (std::size_t i = 0; i < r.outcomes.size(); ++i)
    if (!r.outcomes[i].note.empty())
      rec.notes.push_back(fmt::format("note: group {}: {}", i, r.outcomes[i].note));
  if (r.runs > 1)
    rec.notes.push_back(
        "note: groups of different split calls cannot share one descriptor on this driver");
  if (!r.advice.empty())
    rec.notes.push_back("advice: " + r.advice);
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const group_check &c = checks[i];
    if (c.sms_used > c.context_sms)
      rec.notes.push_back(fmt::format("FAILED: group {} ran on {} SMs, its context holds {}", i,
                                      c.sms_used, c.context_sms));
    if (c.clusters < c.clusters_promised)
      rec.notes.push_back(fmt::format("FAILED: group {} runs {} clusters of {} SMs at once, {} "
                                      "promised",
                                      i, c.clusters, r.params.at(i).coscheduled_sm_count,
                                      c.clusters_promised));
  }
  if (!r.all_made())
    rec.notes.push_back("INVALID: not every group can be made (see the notes): the request is "
                        "invalid on this GPU");
  else if (checked && split_ok(r, checks))
    rec.notes.push_back("OK: every group was made; its kernels stayed on its SMs, and it runs the "
                        "clusters its co-scheduled count promises");
  return rec;
}

} // namespace greenctx::cli::split_report
