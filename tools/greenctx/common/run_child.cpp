// SPDX-License-Identifier: Apache-2.0
#include "common/run_child.hpp"
#include "common/child_tee.hpp"
#include "common/cli_common.hpp"
#include "common/process.hpp"

#include <run_protocol.hpp>

#include <greenctx/greenctx.hpp>

#include <chrono>
#include <cstdlib>
#include <string_view>
#include <unistd.h>

extern char **environ;

namespace greenctx::cli {
namespace {

namespace protocol = run_protocol;

// The variables the CLI sets for the program.
constexpr const char *protocol_names[] = {
    protocol::env_sms,    protocol::env_devices, protocol::env_split_flags,
    protocol::env_strict, protocol::env_report,  protocol::env_root_pid,
    protocol::env_quiet,  protocol::env_measure, protocol::env_real_sm_count,
    protocol::env_split,  protocol::env_piece};

// Their common prefix: any variable that starts with it belongs to the protocol (or to an older
// greenctx's), so a stale one is removed before the CLI sets its own.
std::string_view protocol_prefix() {
  std::string_view prefix = protocol_names[0];
  for (const std::string_view name : protocol_names) {
    std::size_t n = 0;
    while (n < prefix.size() && n < name.size() && prefix[n] == name[n])
      ++n;
    prefix = prefix.substr(0, n);
  }
  return prefix;
}

} // namespace

unsigned check_confinement(const confinement &c) {
  constexpr const char *api = "greenctx run";
  const device dev(c.device);
  const sm_resource all = dev.sms();
  const split_flags flags =
      c.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
  const granularity g = all.grain(flags);
  if (c.sms == 0 || c.sms > all.sm_count())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "--sms " + std::to_string(c.sms) + ": device " + std::to_string(c.device) +
                            " has " + std::to_string(all.sm_count()) +
                            " SMs; valid counts: " + valid_sizes_summary(all.sm_count(), g));
  const split_result r = split_by_count(all, 1, c.sms, flags);
  const unsigned got = r.groups.empty() ? 0 : r.groups.front().sm_count();
  if (got != c.sms)
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                        "--sms " + std::to_string(c.sms) + " is not a size a split of device " +
                            std::to_string(c.device) + " gives (" + r.explanation() +
                            "); valid counts: " + valid_sizes_summary(all.sm_count(), g));
  return got;
}

int check_in_child(const std::function<void()> &check) {
  process::child c = process::fork_call(
      [&] {
        try {
          check();
          return int{exit_ok};
        } catch (const error &e) {
          print_error(e.what());
          return exit_code_for(e);
        } catch (const std::exception &e) {
          print_error(std::string("unexpected error: ") + e.what());
          return int{exit_cuda_error};
        }
      },
      "greenctx run");
  const process::end_status end = c.wait();
  if (end.signal == 0)
    return end.exit_code;
  print_error("the check before running (loading the preload library, asking the driver) ended "
              "with " +
              process::describe(end));
  return exit_cuda_error;
}

std::vector<std::string> protocol_variables_in_environment() {
  const std::string_view prefix = protocol_prefix();
  std::vector<std::string> names;
  for (char **e = environ; *e; ++e) {
    const std::string_view var = *e;
    if (var.starts_with(prefix))
      names.emplace_back(var.substr(0, var.find('=')));
  }
  return names;
}

child_result run_child(const std::vector<std::string> &argv, const confinement &c,
                       child_output output) {
  constexpr const char *api = "greenctx scale";
  const std::string program = process::find_program(argv.at(0), api);
  const std::string_view prefix = protocol_prefix();
  const bool preload = c.sms || c.measure;
  std::vector<std::string> env;
  for (char **e = environ; *e; ++e) {
    const std::string_view var = *e;
    if (var.starts_with(prefix) || (preload && var.starts_with("LD_PRELOAD=")))
      continue;
    env.emplace_back(var);
  }
  std::string report;
  if (preload) {
    const char *existing = std::getenv("LD_PRELOAD");
    env.push_back("LD_PRELOAD=" + preload_library() +
                  (existing && *existing ? std::string(":") + existing : std::string()));
    const auto set = [&](const char *name, const std::string &value) {
      env.push_back(std::string(name) + "=" + value);
    };
    if (c.sms) {
      const split_flags flags =
          c.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;
      set(protocol::env_sms, std::to_string(c.sms));
      set(protocol::env_devices, std::to_string(c.device));
      set(protocol::env_split_flags, std::to_string(static_cast<unsigned>(flags)));
      if (c.real_sm_count)
        set(protocol::env_real_sm_count, "1");
    }
    if (c.measure)
      set(protocol::env_measure, "1");
    report = make_report_file();
    set(protocol::env_report, report);
  }
  // The report file goes when the run is over, or could not start.
  struct report_remover {
    const std::string &path;
    ~report_remover() {
      if (!path.empty())
        unlink(path.c_str());
    }
  } remover{report};
  const bool tee = output == child_output::tee;
  process::pipe_ends out_pipe;
  if (tee)
    out_pipe = process::make_pipe(api, "cannot start the program: pipe");
  process::signal_forwarding forwarding;
  const auto start = std::chrono::steady_clock::now();
  process::child running = process::spawn(
      {program, argv, std::move(env), {-1, out_pipe.write.get(), -1}, &forwarding}, api);
  out_pipe.write.reset();
  child_result out;
  if (tee)
    tee_child_output(out_pipe.read.get(), running, out.out);
  const process::end_status end = running.wait();
  out.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.exit_code = end.exit_code;
  out.signal = end.signal;
  if (!report.empty())
    out.report = read_report(report);
  return out;
}

} // namespace greenctx::cli
