// greenctx verify SPLIT: create the partitions, run a %smid probe on all at once, check them.
#include "cli_common.hpp"
#include "commands.hpp"
#include "report/output.hpp"
#include "report/table.hpp"
#include "verify_processes.hpp"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx verify";

struct verify_options {
  std::string split;
  std::string devices = "0";
  std::string json; ///< --json: a file, "-" for stdout, empty: not asked
  bool ignore_coscheduling = false;
  unsigned blocks_per_sm = 8;
  bool processes = false;
  process_verify_options across; ///< with --processes
};

char letter(std::size_t i) {
  return static_cast<char>(i < 26 ? 'A' + i : 'a' + (i - 26) % 26);
}

std::string plan_summary(const partition_plan &plan) {
  if (plan.groups == 0)
    return "no split: one partition over the whole device";
  std::string s = fmt::format("one split into {} group{} of {} SMs", plan.groups,
                              plan.groups == 1 ? "" : "s", plan.piece_size);
  if (plan.parts.back().rest)
    s += ", the remainder as 'rest'";
  return s;
}

// The JSON of one device's verification.
nlohmann::json verify_json(const driver_info &drv, const device &dev, const partition_set &set,
                           const verify_report &report) {
  nlohmann::json j;
  j["environment"] = environment_json(drv, dev);
  j["plan"] = {{"piece_size", set.plan().piece_size}, {"groups", set.plan().groups}};
  j["partitions"] = nlohmann::json::array();
  for (std::size_t i = 0; i < report.parts.size(); ++i) {
    const auto &u = report.parts[i];
    j["partitions"].push_back(
        {{"label", u.label},
         {"requested", u.requested ? nlohmann::json(u.requested) : nlohmann::json(nullptr)},
         {"obtained", u.obtained},
         {"used", u.sms.size()},
         {"sms", u.sms},
         {"rounding", set.parts()[i].rounding},
         {"map", sm_map(u.sms, report.sm_span, letter(i))},
         {"start_us", u.start_us},
         {"end_us", u.end_us}});
  }
  j["timed"] = report.timed;
  j["min_overlap_us"] =
      report.parts.size() > 1 ? nlohmann::json(report.min_overlap_us) : nlohmann::json(nullptr);
  j["violations"] = report.violations;
  j["notes"] = report.notes;
  j["ok"] = report.ok();
  return j;
}

int run_verify(const verify_options &opt) {
  // Malformed input is rejected before the driver is touched.
  const partition_request request = parse_partition_request(opt.split);
  check_json_path(api, opt.json);
  if (opt.processes) {
    const auto list = parse_device_list(opt.devices, api);
    if (!list || list->size() != 1)
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          "--processes verifies one GPU: name it with --device N, not '" +
                              opt.devices + "'");
    process_verify_options across = opt.across;
    across.split = opt.split;
    across.device = list->front();
    across.json = opt.json;
    across.ignore_coscheduling = opt.ignore_coscheduling;
    return verify_processes(across);
  }
  if (opt.blocks_per_sm == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "--blocks-per-sm must be at least 1");
  const auto list = parse_device_list(opt.devices, api);
  const driver_info drv = query_driver();
  const std::vector<int> ordinals = resolve_device_list(list, device::count(), api);
  const split_flags flags =
      opt.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
  // Every device's partitions are made before any is probed, so that a request one GPU cannot
  // meet is refused (exit 2) before anything runs.
  std::vector<std::unique_ptr<device>> devs;
  std::vector<partition_set> sets;
  for (int d : ordinals) {
    devs.push_back(std::make_unique<device>(d));
    sets.push_back(partition_set::create(*devs.back(), request, flags));
  }
  // Each GPU is probed once; the text and the JSON both show that one measurement.
  std::vector<verify_report> reports;
  int failed = 0;
  for (std::size_t i = 0; i < devs.size(); ++i) {
    reports.push_back(verify_partitions(*devs[i], sets[i], opt.blocks_per_sm));
    if (!reports.back().ok())
      ++failed;
  }
  if (!opt.json.empty()) {
    // What was asked at the top level, each GPU's verification in `devices`.
    nlohmann::json j;
    j["split"] = request.to_string();
    j["flags"] = opt.ignore_coscheduling ? "ignore_sm_coscheduling" : "none";
    j["devices"] = nlohmann::json::array();
    for (std::size_t i = 0; i < devs.size(); ++i)
      j["devices"].push_back(verify_json(drv, *devs[i], sets[i], reports[i]));
    j["ok"] = failed == 0;
    write_json(api, "verify", opt.json, j);
  }
  if (!json_replaces_text(opt.json)) {
    for (std::size_t i = 0; i < devs.size(); ++i) {
      if (i > 0)
        fmt::print("\n");
      print_verification(*devs[i], sets[i], request, reports[i]);
    }
    if (devs.size() > 1)
      fmt::print("\n{}: {} of {} GPUs ({}) passed\n", failed ? "FAILED" : "OK",
                 devs.size() - failed, devs.size(), join_ordinals(ordinals));
  }
  return failed ? exit_check_failed : exit_ok;
}

} // namespace

int print_verification(const device &dev, const partition_set &set,
                       const partition_request &request, unsigned blocks_per_sm) {
  return print_verification(dev, set, request, verify_partitions(dev, set, blocks_per_sm));
}

int print_verification(const device &dev, const partition_set &set,
                       const partition_request &request, const verify_report &report) {
  const auto [major, minor] = dev.compute_capability();
  fmt::print("greenctx verify {} on GPU {} ({}, {} SMs, CC {}.{})\n", request.to_string(),
             dev.ordinal(), dev.name(), dev.sms().sm_count(), major, minor);
  fmt::print("plan: {}\n\n", plan_summary(set.plan()));
  const std::vector<column> columns = {
      {"#", align::right, 2},
      {"partition", align::left, 9},
      {"requested", align::right, 9},
      {"obtained", align::right, 8},
      {"used", align::right, 4},
      {fmt::format("SM map (one character per SM id, 0..{})", report.sm_span - 1), align::left}};
  std::vector<row> rows;
  std::string combined(report.sm_span, '.');
  for (std::size_t i = 0; i < report.parts.size(); ++i) {
    const auto &u = report.parts[i];
    const std::string map = sm_map(u.sms, report.sm_span, letter(i));
    for (std::size_t c = 0; c < map.size(); ++c)
      if (map[c] != '.')
        combined[c] = combined[c] == '.' ? map[c] : '!';
    rows.push_back({std::to_string(i), u.label, u.requested ? std::to_string(u.requested) : "-",
                    std::to_string(u.obtained), std::to_string(u.sms.size()), map});
  }
  rows.push_back({"", "all", "", "", "", combined});
  fmt::print("{}", text_table(columns, rows));
  for (std::size_t i = 0; i < set.parts().size(); ++i)
    if (!set.parts()[i].rounding.empty())
      fmt::print("note: partition {} ({}): {}\n", i, set.parts()[i].label(),
                 set.parts()[i].rounding);
  if (report.timed && report.parts.size() > 1 && report.min_overlap_us > 0)
    fmt::print("timing: the probes ran at the same time (shortest overlap between two "
               "partitions: {})\n",
               format_us(report.min_overlap_us));
  for (const auto &n : report.notes)
    fmt::print("note: {}\n", n);
  if (report.ok()) {
    fmt::print(
        "\nOK: every partition stayed within its SMs, and no SM was used by two partitions\n");
    return exit_ok;
  }
  for (const auto &v : report.violations)
    fmt::print("VIOLATION: {}\n", v);
  fmt::print("\nFAILED: {} violation{} ('!' in the map marks an SM used by two partitions)\n",
             report.violations.size(), report.violations.size() == 1 ? "" : "s");
  return exit_check_failed;
}

void add_verify(CLI::App &app, action &run) {
  auto opt = std::make_shared<verify_options>();
  auto *cmd = app.add_subcommand(
      "verify", "Create the partitions of SPLIT, run a %smid probe on all at once, and check that "
                "they are disjoint and that each kernel stayed inside its partition");
  cmd->add_option("SPLIT", opt->split,
                  "SM counts separated by commas, optionally ending in 'rest' (e.g. 16,rest or "
                  "8,8,rest)")
      ->required();
  cmd->add_option("-d,--device", opt->devices,
                  "GPUs to verify: an ordinal in decimal, ordinals separated by commas (e.g. 0,1), "
                  "or all (every GPU the driver sees); each is verified in turn")
      ->check(device_list_check(api))
      ->capture_default_str();
  add_json_option(*cmd, opt->json);
  cmd->add_flag("--ignore-coscheduling", opt->ignore_coscheduling,
                "Split with IgnoreSmCoscheduling (steps of 2 SMs on CC 9.0, no cluster guarantee)");
  cmd->add_option("--blocks-per-sm", opt->blocks_per_sm,
                  "Probe blocks per device SM launched on each partition")
      ->transform(decimal_for<unsigned>())
      ->capture_default_str();
  auto *processes = cmd->add_flag(
      "--processes", opt->processes,
      "Start one process per piece (greenctx run --split SPLIT --piece I) and check, by filling "
      "the pieces alone and all at once, that each process is told and uses its piece's SMs and "
      "that the pieces run side by side (needs MPS: without it the processes take turns and the "
      "check fails)");
  cmd->add_option("--spin-ms", opt->across.spin_ms,
                  "With --processes: how long each wave of a fill holds its SMs")
      ->transform(decimal(1, 10000))
      ->capture_default_str()
      ->needs(processes);
  cmd->add_option("--rounds", opt->across.rounds,
                  "With --processes: how many times all pieces fill at once")
      ->transform(decimal(1, 100))
      ->capture_default_str()
      ->needs(processes);
  cmd->callback([opt, &run] { run = [opt] { return run_verify(*opt); }; });
}

} // namespace greenctx::cli
