#include "commands/split/split_record.hpp"

#include "report/json.hpp"

#include <greenctx/plan/group_params.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace greenctx::cli::split_report {
namespace {

using report::cell;
using report::number_format;
using report::yes_no;

const number_format count{"", 0};

cell number(unsigned v) {
  return static_cast<double>(v);
}

} // namespace

bool results::all_made() const {
  return std::all_of(groups.begin(), groups.end(), [](const group &g) { return g.made; });
}

bool results::ok() const {
  return all_made() && std::all_of(groups.begin(), groups.end(),
                                   [](const group &g) { return !g.check || g.check->ok(); });
}

report::record split_record(const results &r, const nlohmann::json &environment) {
  report::record rec;
  rec.kind = "split";
  rec.title = fmt::format("greenctx split '{}' on {}{}", r.request,
                          report::gpu_described(environment), r.dry_run ? ", dry run" : "");
  rec.environment = report::environment_of(environment);
  rec.config = {{"request", "request", r.request, {}},
                {"dry_run", "dry run", yes_no(r.dry_run), {}}};
  rec.values = {{"made_by",
                 "made by",
                 r.native ? std::string("cuDevSmResourceSplit (native)")
                          : fmt::format("greenctx, from {} split-by-count call{}", r.split_calls,
                                        r.split_calls == 1 ? "" : "s"),
                 {}},
                {"native", "native", yes_no(r.native), {}, true},
                {"split_calls", "split-by-count calls", number(r.split_calls), count, true},
                {"remainder_sms", "remainder", number(r.remainder_sms), {"SMs", 0}},
                {"all_made", "every group made", yes_no(r.all_made()), {}},
                {"ok", "ok", yes_no(r.ok()), {}, true},
                {"explanation", "explanation", r.explanation, {}, true},
                {"advice", "advice", r.advice.empty() ? cell{} : cell{r.advice}, {}, true}};

  const bool checked =
      std::any_of(r.groups.begin(), r.groups.end(), [](const group &g) { return g.check; });
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
  for (std::size_t i = 0; i < r.groups.size(); ++i) {
    const group &g = r.groups[i];
    const auto checked_value = [&](unsigned group_check::*member) {
      return g.check ? number((*g.check).*member) : cell{};
    };
    groups.rows.push_back(
        {number(static_cast<unsigned>(i)), number(g.sm_count), number(g.coscheduled),
         number(g.preferred), number(g.flags), g.backfill ? "backfill" : "-",
         g.requested ? number(g.requested) : cell{"all"}, g.made ? number(g.obtained) : cell{},
         yes_no(g.made), number(g.split_call), number(g.piece_size),
         yes_no(g.ignore_coscheduling_pieces), g.pieces.empty() ? cell{} : cell{g.pieces},
         checked_value(&group_check::context_sms), checked_value(&group_check::sms_used),
         checked_value(&group_check::clusters), checked_value(&group_check::clusters_promised),
         g.note.empty() ? cell{} : cell{g.note}});
  }
  rec.tables.push_back(std::move(groups));

  for (std::size_t i = 0; i < r.groups.size(); ++i)
    if (!r.groups[i].note.empty())
      rec.notes.push_back(fmt::format("note: group {}: {}", i, r.groups[i].note));
  if (r.split_calls > 1)
    rec.notes.push_back(
        "note: groups of different split calls cannot share one descriptor on this driver");
  if (!r.advice.empty())
    rec.notes.push_back("advice: " + r.advice);
  for (std::size_t i = 0; i < r.groups.size(); ++i) {
    const auto &c = r.groups[i].check;
    if (c && c->sms_used > c->context_sms)
      rec.notes.push_back(fmt::format("FAILED: group {} ran on {} SMs, its context holds {}", i,
                                      c->sms_used, c->context_sms));
    if (c && c->clusters < c->clusters_promised)
      rec.notes.push_back(fmt::format("FAILED: group {} runs {} clusters of {} SMs at once, {} "
                                      "promised",
                                      i, c->clusters, r.groups[i].coscheduled,
                                      c->clusters_promised));
  }
  if (!r.all_made())
    rec.notes.push_back("INVALID: not every group can be made (see the notes): the request is "
                        "invalid on this GPU");
  else if (checked && r.ok())
    rec.notes.push_back("OK: every group was made; its kernels stayed on its SMs, and it runs the "
                        "clusters its co-scheduled count promises");
  return rec;
}

results from_json(const nlohmann::json &j) {
  results r;
  r.request = j.at("request").get<std::string>();
  r.dry_run = j.at("dry_run").get<bool>();
  r.native = j.at("native").get<bool>();
  r.split_calls = whole<unsigned>(j.at("split_calls"));
  r.remainder_sms = whole<unsigned>(j.at("remainder_sms"));
  r.explanation = j.at("explanation").get<std::string>();
  r.advice = j.value("advice", std::string());
  for (const auto &x : j.at("groups")) {
    group g;
    const auto &p = x.at("params");
    g.sm_count = whole<unsigned>(p.at("smCount"));
    g.coscheduled = whole<unsigned>(p.at("coscheduledSmCount"));
    g.preferred = whole<unsigned>(p.at("preferredCoscheduledSmCount"));
    g.flags = whole<unsigned>(p.at("flags"));
    g.backfill = (g.flags & sm_group_backfill) != 0;
    g.requested = whole<unsigned>(x.at("requested"));
    g.obtained = whole<unsigned>(x.at("obtained"));
    g.made = x.at("made").get<bool>();
    g.split_call = whole<unsigned>(x.at("split_call"));
    g.piece_size = whole<unsigned>(x.at("piece_size"));
    g.ignore_coscheduling_pieces = x.at("ignore_sm_coscheduling_pieces").get<bool>();
    g.pieces = x.value("pieces", std::string());
    g.note = x.at("note").get<std::string>();
    if (const auto it = x.find("check"); it != x.end())
      g.check =
          group_check{whole<unsigned>(it->at("context_sms")), whole<unsigned>(it->at("sms_used")),
                      whole<unsigned>(it->at("max_active_clusters")),
                      whole<unsigned>(it->at("clusters_promised"))};
    r.groups.push_back(std::move(g));
  }
  return r;
}

} // namespace greenctx::cli::split_report
