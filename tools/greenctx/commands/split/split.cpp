// SPDX-License-Identifier: Apache-2.0
// greenctx split REQUEST: CUDA 13.1's heterogeneous split (group parameters), real or dry run.
#include "common/cli_common.hpp"
#include "common/help.hpp"
#include "commands/commands.hpp"
#include "report/output.hpp"
#include "commands/split/split_record.hpp"

#include <fmt/format.h>

#include <memory>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx split";

struct split_options {
  std::string request;
  int device = 0;
  bool dry_run = false;
  output_options output;
};

// Each made group's green context, its SMs read back, a %smid probe on it and, for co-scheduled
// groups on CC 9.0+, the clusters that fit at once against what its count promises.
split_report::group_check check_group(const device &dev, const sm_group &g,
                                      const sm_group_params &p) {
  const green_context gc = green_context::create(descriptor::from(g.pieces));
  split_report::group_check c;
  c.context_sms = gc.sms().sm_count();
  const stream s = gc.create_stream();
  const sm_probe probe(dev, dev.sms().sm_count() * 8);
  probe.launch(s);
  s.synchronize();
  c.sms_used = static_cast<unsigned>(probe.sms_used().size());
  if (dev.compute_capability().first >= 9 && g.coscheduled >= 2) {
    c.clusters = max_active_sm_clusters(gc, g.coscheduled);
    c.clusters_promised =
        clusters_promised(c.context_sms, g.coscheduled, p.flags & sm_group_backfill);
  }
  return c;
}

// The exit code of a split: 2 when a group cannot be made (said on stderr too), 1 when a check
// failed.
int verdict(bool all_made, bool ok) {
  if (!all_made) {
    print_error("not every group can be made (see the notes): the request is invalid on this GPU");
    return exit_usage;
  }
  return ok ? exit_ok : exit_check_failed;
}

int run_split(const split_options &opt) {
  check_argument_or_from(api, "REQUEST", opt.request, opt.output);
  check_output_paths(api, opt.output);
  if (!opt.output.from.empty()) {
    const report::record rec = read_record(api, "split", opt.output.from);
    print_record(api, opt.output, rec);
    return verdict(!rec.says_no("all_made"), !rec.says_no("ok"));
  }
  // Malformed input is rejected before the driver is touched.
  std::vector<sm_group_params> params = parse_group_params(opt.request);
  const driver_info drv = query_driver();
  const device dev(opt.device);
  // As cudaDevSmResourceSplit: groups whose clusters no driver promise backs are proved at the
  // split; one that falls short is shown not made, and makes the request invalid.
  const group_split_result r =
      split_groups(dev.sms(), params, {.dry_run = opt.dry_run, .proof = cluster_proof::report});
  std::vector<split_report::group_check> checks;
  if (!opt.dry_run && r.all_made())
    for (std::size_t i = 0; i < r.groups.size(); ++i)
      checks.push_back(check_group(dev, r.groups[i], r.params[i]));
  print_record(api, opt.output,
               split_report::split_record(opt.request, r, checks,
                                          with_date_and_command(environment_json(drv, dev))));
  return verdict(r.all_made(), split_report::split_ok(r, checks));
}

} // namespace

void add_split(CLI::App &app, action &run) {
  const auto [cmd, opt] = add_command<split_options>(
      app, "split",
      "Split the GPU's SMs by CUDA 13.1 group parameters (cudaDevSmResourceSplit), show what each "
      "group gets and, unless --dry-run, check it on the hardware",
      exit_footer("a check of the groups on the hardware failed"));
  cmd->add_option("REQUEST", opt->request,
                  "Groups separated by spaces or commas, each an SM count (0: as many as fit) "
                  "with options :cosched=N :pref=N :backfill, e.g. '16:cosched=2 0:backfill' "
                  "(required, unless --from)");
  add_device_option(*cmd, opt->device);
  cmd->add_flag("--dry-run", opt->dry_run,
                "Only compute the groups (result NULL): no green contexts, no checks");
  add_record_options(*cmd, opt->output, "the groups' table");
  run_with(*cmd, run, opt, run_split, [cmd = cmd] { refuse_beside_from(*cmd); });
}

} // namespace greenctx::cli
