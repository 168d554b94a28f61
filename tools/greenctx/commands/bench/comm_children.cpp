// SPDX-License-Identifier: Apache-2.0
#include "commands/bench/comm_children.hpp"
#include "common/cli_common.hpp"
#include "common/process.hpp"
#include "report/json.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <unistd.h>

namespace greenctx::cli::bench::comm {
namespace {

struct child_result {
  nlohmann::json json; ///< null when the child sent nothing readable
  std::string ended;   ///< how it ended when not with exit status 0
  int exit_status = -1;
};

constexpr const char *api = "greenctx bench --comm";

// In the child: measure and send the JSON through `fd`. It leaves without running destructors
// (process::fork_call): the measurement already released what it could; after a hang nothing
// more can be released.
int child_main(int fd, const run_config &cfg, const std::optional<unsigned> &max_ctas,
               const std::function<void(const std::string &)> &log) {
  if (max_ctas)
    setenv("NCCL_MAX_CTAS", std::to_string(*max_ctas).c_str(), 1);
  else
    unsetenv("NCCL_MAX_CTAS");
  nlohmann::json j;
  int code = exit_ok;
  try {
    j = measure(cfg, log);
  } catch (const error &e) {
    code = exit_code_for(e);
    j = {{"error", e.what()}, {"exit", code}};
  } catch (const std::exception &e) {
    code = exit_cuda_error;
    j = {{"error", std::string("unexpected error: ") + e.what()}, {"exit", code}};
  }
  process::write_all(fd, j.dump());
  close(fd);
  return code;
}

// One measurement in a child, killed when it takes longer than `limit` (a hung collective).
child_result measure_in_child(const run_config &cfg, const std::optional<unsigned> &max_ctas,
                              std::chrono::seconds limit,
                              const std::function<void(const std::string &)> &log) {
  process::pipe_ends result = process::make_pipe(api, "pipe failed");
  process::child measuring = process::fork_call(
      [&] {
        result.read.reset();
        return child_main(result.write.release(), cfg, max_ctas, log);
      },
      api);
  result.write.reset();
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  process::read_step step;
  while ((step = process::read_before(result.read.get(), text, deadline)) ==
         process::read_step::data) {
  }
  result.read.reset();
  child_result out;
  // After the end of the pipe the child is leaving: it gets what is left of its time and ten
  // seconds more to do so.
  const auto grace = deadline - std::chrono::steady_clock::now() + std::chrono::seconds(10);
  const process::end_status end =
      measuring.wait_or_kill(step == process::read_step::deadline
                                 ? std::chrono::milliseconds(0)
                                 : std::chrono::duration_cast<std::chrono::milliseconds>(grace));
  if (end.timed_out)
    out.ended = fmt::format("killed after {} s (raise it with --comm-timeout)", limit.count());
  else if (end.signal)
    out.ended = "ended with " + process::describe(end);
  else
    out.exit_status = end.exit_code;
  if (!text.empty())
    out.json = nlohmann::json::parse(text, nullptr, false);
  if (out.json.is_discarded())
    out.json = nullptr;
  return out;
}

// The points of a child that failed before or while measuring: one per size, with the reason.
void add_failed(results &r, const std::vector<mode> &modes, const std::string &why) {
  for (const mode &m : modes)
    for (const std::size_t b : r.sizes) {
      bool have = false;
      for (const auto &p : r.points)
        have = have || (p.m == m && p.bytes == b);
      if (!have) {
        point pt;
        pt.m = m;
        pt.bytes = b;
        pt.failure = why;
        r.points.push_back(std::move(pt));
      }
    }
}

// Adds a child's points to `r` (and, from the first child, the environment). Reads everything
// before adding anything; throws nlohmann::json::exception on a malformed result.
void read_points(const nlohmann::json &j, bool first, results &r, nlohmann::json &env) {
  std::vector<point> points;
  for (const auto &q : j.at("points"))
    points.push_back(point_from_json(q));
  if (first) {
    env = j.at("environment");
    read_to(env, "devices", r.devices);
    r.gpus = static_cast<int>(r.devices.size());
    r.gemm_alone_tflops = j.value("gemm_alone_tflops", 0.0);
  }
  r.points.insert(r.points.end(), points.begin(), points.end());
}

} // namespace

void start_results(const plan &p, results &r) {
  setenv("NCCL_NVLS_ENABLE", "0", 0); // NVLink multicast off unless the caller chose
  r.ks = p.ks;
  r.sizes = p.measure.sizes;
  r.iterations = p.measure.iterations;
  r.warmup = p.measure.warmup;
  r.gemm_n = p.measure.gemm_n;
  r.tolerance_percent = p.tolerance_percent;
}

group_outcome run_group(const plan &p, const std::vector<mode> &modes,
                        const std::optional<unsigned> &max_ctas, bool first, results &r,
                        nlohmann::json &env, const std::function<void(const std::string &)> &log) {
  run_config cfg = p.measure;
  cfg.modes = modes;
  cfg.gemm_alone = first;
  const child_result c = measure_in_child(cfg, max_ctas, p.child_limit, log);
  group_outcome out;
  if (!c.json.is_object())
    out.failure = c.ended.empty()
                      ? fmt::format("the child sent no result (exit status {})", c.exit_status)
                      : "the child " + c.ended;
  else if (c.json.contains("error"))
    out.failure = c.json["error"].get<std::string>();
  if (c.json.is_object() && c.json.contains("points")) {
    try {
      read_points(c.json, first, r, env);
      out.measured = true;
    } catch (const nlohmann::json::exception &e) {
      out.failure = std::string("the child's result could not be read: ") + e.what();
    }
  }
  if (!out.failure.empty()) {
    out.exit = c.json.is_object() ? c.json.value("exit", int{exit_cuda_error}) : exit_cuda_error;
    add_failed(r, modes, out.failure);
  }
  return out;
}

int run_in_children(const plan &p, results &r, nlohmann::json &env,
                    const std::function<void(const std::string &)> &log) {
  if (const char *v = std::getenv("NCCL_MAX_CTAS"))
    log(fmt::format("NCCL_MAX_CTAS={} in the environment is ignored: the max-ctas modes set it, "
                    "the others unset it",
                    v));
  start_results(p, r);

  struct group {
    std::vector<mode> modes;
    std::optional<unsigned> max_ctas;
  };
  std::vector<group> groups = {
      {{{mode_kind::alone, 0}, {mode_kind::shared, 0}, {mode_kind::shared_high, 0}}, {}}};
  for (unsigned k : p.ks)
    groups.push_back({{{mode_kind::partitioned, k}}, {}});
  for (unsigned k : p.ks)
    groups.push_back({{{mode_kind::partitioned_ctas, k}}, k});
  for (unsigned k : p.ks)
    groups.push_back({{{mode_kind::max_ctas, k}}, k});

  for (std::size_t g = 0; g < groups.size(); ++g) {
    std::string names;
    for (const auto &m : groups[g].modes)
      names += (names.empty() ? "" : ", ") + m.name();
    if (g > 0) // the first child says nothing before its checks pass (too few GPUs, no NCCL)
      log(fmt::format("child {}/{}: {}{}", g + 1, groups.size(), names,
                      groups[g].max_ctas ? fmt::format(" (NCCL_MAX_CTAS={})", *groups[g].max_ctas)
                                         : ""));
    const group_outcome c = run_group(p, groups[g].modes, groups[g].max_ctas, g == 0, r, env, log);
    if (c.failure.empty())
      continue;
    if (g == 0 && !c.measured) {
      // Nothing could be measured at all (too few GPUs, no NCCL): the run ends with its reason.
      print_error(c.failure);
      return c.exit;
    }
    log("failed: " + c.failure);
  }
  return exit_ok;
}

} // namespace greenctx::cli::bench::comm
