// greenctx split REQUEST: CUDA 13.1's heterogeneous split (group parameters), real or dry run.
#include "cli_common.hpp"
#include "commands.hpp"
#include "report/output.hpp"
#include "report/table.hpp"

#include <fmt/format.h>

#include <map>
#include <memory>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx split";

struct split_options {
  std::string request;
  int device = 0;
  bool dry_run = false;
  std::string json; ///< --json: a file, "-" for stdout, empty: not asked
};

// What a real split's group turned out to be on the hardware.
struct group_check {
  unsigned context_sms = 0; // read back from its green context
  unsigned sms_used = 0;    // distinct %smid of a probe on it
  unsigned clusters = 0;    // clusters of its co-scheduled count that fit at once
  unsigned clusters_promised = 0;
};

std::string flags_text(const sm_group_params &p) {
  return p.flags & sm_group_backfill ? "backfill" : "-";
}

std::string pieces_text(const sm_group &g) {
  if (g.pieces.empty())
    return "-";
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

std::vector<group_check> check_groups(const device &dev, const group_split_result &r) {
  std::vector<group_check> out;
  for (std::size_t i = 0; i < r.groups.size(); ++i) {
    const sm_group &g = r.groups[i];
    const green_context gc = green_context::create(descriptor::from(g.pieces));
    group_check c;
    c.context_sms = gc.sms().sm_count();
    const stream s = gc.create_stream();
    const sm_probe probe(dev, dev.sms().sm_count() * 8);
    probe.launch(s);
    s.synchronize();
    c.sms_used = static_cast<unsigned>(probe.sms_used().size());
    if (dev.compute_capability().first >= 9 && g.coscheduled >= 2) {
      c.clusters = max_active_sm_clusters(gc, g.coscheduled);
      const bool backfill = r.params[i].flags & sm_group_backfill;
      c.clusters_promised = clusters_promised(c.context_sms, g.coscheduled, backfill);
    }
    out.push_back(c);
  }
  return out;
}

int run_split(const split_options &opt) {
  // Malformed input is rejected before the driver is touched.
  std::vector<sm_group_params> params = parse_group_params(opt.request);
  check_json_path(api, opt.json);
  const driver_info drv = query_driver();
  const device dev(opt.device);
  // As cudaDevSmResourceSplit: groups whose clusters no driver promise backs are proved at the
  // split; one that falls short is shown not made, and makes the request invalid.
  const group_split_result r =
      split_groups(dev.sms(), params, {.dry_run = opt.dry_run, .proof = cluster_proof::report});
  const std::vector<group_check> checks =
      opt.dry_run || !r.all_made() ? std::vector<group_check>{} : check_groups(dev, r);
  bool ok = r.all_made();
  for (const auto &c : checks)
    ok = ok && c.sms_used <= c.context_sms && c.clusters >= c.clusters_promised;

  if (!opt.json.empty()) {
    nlohmann::json j;
    j["environment"] = environment_json(drv, dev);
    j["request"] = opt.request;
    j["dry_run"] = opt.dry_run;
    j["native"] = r.native;
    j["split_calls"] = r.runs;
    j["groups"] = nlohmann::json::array();
    for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
      const auto &o = r.outcomes[i];
      const auto &p = r.params[i];
      nlohmann::json g = {{"params",
                           {{"smCount", p.sm_count},
                            {"coscheduledSmCount", p.coscheduled_sm_count},
                            {"preferredCoscheduledSmCount", p.preferred_coscheduled_sm_count},
                            {"flags", p.flags}}},
                          {"requested", o.requested},
                          {"obtained", o.obtained},
                          {"made", o.ok()},
                          {"split_call", o.run},
                          {"piece_size", o.unit},
                          {"ignore_sm_coscheduling_pieces", o.ignore_coscheduling_pieces},
                          {"note", o.note}};
      if (i < r.groups.size())
        g["pieces"] = pieces_text(r.groups[i]);
      if (i < checks.size())
        g["check"] = {{"context_sms", checks[i].context_sms},
                      {"sms_used", checks[i].sms_used},
                      {"max_active_clusters", checks[i].clusters},
                      {"clusters_promised", checks[i].clusters_promised}};
      j["groups"].push_back(g);
    }
    j["remainder_sms"] = r.remainder_sms;
    j["explanation"] = r.explanation();
    if (!r.advice.empty())
      j["advice"] = r.advice;
    j["ok"] = ok;
    write_json(api, "split", opt.json, j);
  }
  if (!json_replaces_text(opt.json)) {
    const auto [major, minor] = dev.compute_capability();
    fmt::print("greenctx split '{}' on GPU {} ({}, {} SMs, CC {}.{}){}\n", opt.request,
               dev.ordinal(), dev.name(), dev.sms().sm_count(), major, minor,
               opt.dry_run ? ", dry run" : "");
    fmt::print("driver {}: {}\n\n", format_cuda_version(drv.version),
               r.native ? "cuDevSmResourceSplit (native)"
                        : fmt::format("built by greenctx from {} split-by-count call{}", r.runs,
                                      r.runs == 1 ? "" : "s"));
    std::vector<column> columns = {{"#", align::right, 2},
                                   {"smCount", align::right, 7},
                                   {"cosched", align::right, 7, " "},
                                   {"pref", align::right, 5, " "},
                                   {"flags", align::left, 8},
                                   {"asked", align::right, 6, " "},
                                   {"got", align::right, 6, " "},
                                   {"call", align::right, 4},
                                   {"pieces", align::left, 16}};
    if (!checks.empty())
      columns.insert(columns.end(), {{"used", align::right, 4}, {"clusters", align::left}});
    std::vector<row> rows;
    for (std::size_t i = 0; i < r.outcomes.size(); ++i) {
      const auto &o = r.outcomes[i];
      const auto &p = r.params[i];
      row cells = {std::to_string(i),
                   std::to_string(p.sm_count),
                   std::to_string(p.coscheduled_sm_count),
                   std::to_string(p.preferred_coscheduled_sm_count),
                   flags_text(p),
                   o.requested ? std::to_string(o.requested) : "all",
                   o.ok() ? std::to_string(o.obtained) : "-",
                   std::to_string(o.run),
                   i < r.groups.size() ? pieces_text(r.groups[i]) : fmt::format("of {}", o.unit)};
      if (i < checks.size()) {
        cells.push_back(std::to_string(checks[i].sms_used));
        cells.push_back(fmt::format("{} of {}", checks[i].clusters, p.coscheduled_sm_count));
      }
      rows.push_back(std::move(cells));
    }
    fmt::print("{}", text_table(columns, rows));
    fmt::print("remainder: {} SMs\n", r.remainder_sms);
    for (std::size_t i = 0; i < r.outcomes.size(); ++i)
      if (!r.outcomes[i].note.empty())
        fmt::print("note: group {}: {}\n", i, r.outcomes[i].note);
    if (r.runs > 1)
      fmt::print("note: groups of different split calls cannot share one descriptor on this "
                 "driver\n");
    if (!r.advice.empty())
      fmt::print("advice: {}\n", r.advice);
    for (std::size_t i = 0; i < checks.size(); ++i)
      if (checks[i].clusters < checks[i].clusters_promised)
        fmt::print("FAILED: group {} runs {} clusters of {} SMs at once, {} promised\n", i,
                   checks[i].clusters, r.params[i].coscheduled_sm_count,
                   checks[i].clusters_promised);
    if (!checks.empty() && ok)
      fmt::print("\nOK: every group was made; its kernels stayed on its SMs, and it runs the "
                 "clusters its co-scheduled count promises\n");
  }
  if (!r.all_made()) {
    print_error("not every group can be made (see the notes): the request is invalid on this GPU");
    return exit_usage;
  }
  return ok ? exit_ok : exit_check_failed;
}

} // namespace

void add_split(CLI::App &app, action &run) {
  auto opt = std::make_shared<split_options>();
  auto *cmd = app.add_subcommand(
      "split", "Split the GPU's SMs by CUDA 13.1 group parameters (cudaDevSmResourceSplit), "
               "show what each group gets and, unless --dry-run, check it on the hardware");
  cmd->add_option("REQUEST", opt->request,
                  "Groups separated by spaces or commas, each an SM count (0: as many as fit) "
                  "with options :cosched=N :pref=N :backfill, e.g. '16:cosched=2 0:backfill'")
      ->required();
  add_device_option(*cmd, opt->device);
  cmd->add_flag("--dry-run", opt->dry_run,
                "Only compute the groups (result NULL): no green contexts, no checks");
  add_json_option(*cmd, opt->json);
  cmd->callback([opt, &run] { run = [opt] { return run_split(*opt); }; });
}

} // namespace greenctx::cli
