// SPDX-License-Identifier: Apache-2.0
// greenctx verify SPLIT --processes: one process per piece of SPLIT, each started as
// `greenctx run --split SPLIT --piece I -- greenctx verify-piece` (the hidden probe below), so that
// what is verified is what `greenctx run` gives a program. greenctx drives them through their
// stdin and stdout, one command and one JSON line at a time:
//
//   probe     a %smid probe over the piece: how many distinct SMs its blocks ran on (under MPS the
//             ids are renumbered per client, so the count is what can be checked, not the ids)
//   fill NS   WAVES waves of blocks that each hold half an SM for NS ns (%globaltimer): on exactly
//             the piece's SMs it takes WAVES x NS; on more SMs less, on SMs shared with other work
//             more. It answers its first block's start and last block's end on the GPU's timer.
//   work N    the same blocks each running N dependent multiply-adds per thread: work, not time.
//             A block that spins on the clock hides a process's turns on the GPU (it ends on time
//             however long it lost its SM: measured on the H200, two processes without MPS
//             "ran side by side" that way), work does not.
//
// Each piece fills alone (the others idle); the first piece's work is timed to size N so that
// the work alone takes as long as a fill; each piece works alone, then all work at once, ROUNDS
// times. The checks are greenctx/plan/process_check.hpp's.
#include "commands/verify/processes.hpp"
#include "common/cli_common.hpp"
#include "commands/commands.hpp"
#include "common/process.hpp"
#include "report/json.hpp"
#include "report/output.hpp"
#include "commands/verify/verify_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits.h>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace greenctx::cli {
namespace {

constexpr const char *api = "greenctx verify --processes";

// ---- the probe: one piece's process -------------------------------------------------------------

void answer(const nlohmann::json &j) {
  std::cout << j.dump() << std::endl; // flushed: greenctx waits for the line
}

/// Waits for `s`, then the first start and the last end of the blocks' stamps.
nlohmann::json span_json(const stream &s, const device_buffer &stamps, unsigned blocks) {
  s.synchronize();
  std::vector<unsigned long long> t(2ull * blocks);
  stamps.copy_to_host(t.data(), t.size() * sizeof t[0], s);
  unsigned long long first = std::numeric_limits<unsigned long long>::max(), last = 0;
  for (unsigned b = 0; b < blocks; ++b) {
    first = std::min(first, t[2 * b]);
    last = std::max(last, t[2 * b + 1]);
  }
  return {{"start_ns", first}, {"end_ns", last}};
}

int run_piece_probe(int ordinal, unsigned waves) {
  const device dev(ordinal);
  // What any program would read: under greenctx run, its piece's count.
  const int told = dev.attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  // Blocks that hold an SM whole (fill_sms' shape), in waves over the SMs the process is told.
  const sm_filling_blocks shape = sm_filling_blocks_of(dev.native_handle());
  const unsigned threads = shape.threads;
  const unsigned blocks = waves * shape.per_sm * static_cast<unsigned>(told);
  const stream s = dev.primary_context().create_stream(stream_flags::non_blocking);
  device_buffer stamps(dev, 16ull * blocks);
  answer({{"ready", true},
          {"told", told},
          {"pid", static_cast<long>(getpid())},
          {"blocks", blocks},
          {"threads", threads}});
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line == "probe") {
      const sm_probe probe(dev, 8u * static_cast<unsigned>(told), std::chrono::microseconds(50));
      probe.launch(s);
      s.synchronize();
      answer({{"used", probe.sms_used().size()}});
    } else if (line.rfind("fill ", 0) == 0) {
      const long long ns = std::atoll(line.c_str() + 5);
      launch_timed_spin(s, blocks, std::chrono::nanoseconds(ns), threads, stamps);
      answer(span_json(s, stamps, blocks));
    } else if (line.rfind("work ", 0) == 0) {
      const unsigned long long n = std::strtoull(line.c_str() + 5, nullptr, 10);
      launch_timed_work(s, blocks, n, threads, stamps);
      answer(span_json(s, stamps, blocks));
    } else {
      answer({{"error", "unknown command '" + line + "'"}});
      return exit_usage;
    }
  }
  return exit_ok;
}

// ---- greenctx's side ----------------------------------------------------------------------------

std::string self_path() {
  const std::optional<std::string> path = own_program_path();
  if (!path)
    throw error(CUDA_ERROR_OPERATING_SYSTEM, api,
                std::string("cannot find greenctx's own program: ") + std::strerror(errno));
  return *path;
}

/// One piece's process: its stdin and stdout are pipes of greenctx's, its stderr a file that is
/// shown when it fails. The process is killed and reaped if it is still running at the end.
struct piece_process {
  process::child proc;
  process::descriptor to, from, err;
  std::string pending; ///< read but not yet a whole line

  /// The last lines of what it wrote on stderr.
  std::string stderr_tail(std::size_t lines = 6) const {
    std::istringstream in(process::contents(err.get()));
    std::vector<std::string> all;
    for (std::string l; std::getline(in, l);)
      all.push_back(l);
    std::string out;
    for (std::size_t i = all.size() > lines ? all.size() - lines : 0; i < all.size(); ++i)
      out += "\n    " + all[i];
    return out.empty() ? " (nothing on stderr)" : out;
  }
};

void start(piece_process &p, const std::vector<std::string> &argv) {
  process::pipe_ends in = process::make_pipe(api), out = process::make_pipe(api);
  p.err = process::scratch_file(api);
  p.proc = process::spawn(
      {argv.front(), argv, std::nullopt, {in.read.get(), out.write.get(), p.err.get()}, nullptr},
      api);
  p.to = std::move(in.write);
  p.from = std::move(out.read);
}

/// Its next line on stdout as JSON, or nullopt when it ended or `timeout` passed.
std::optional<nlohmann::json> read_answer(piece_process &p, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (const auto nl = p.pending.find('\n'); nl != std::string::npos) {
      const std::string line = p.pending.substr(0, nl);
      p.pending.erase(0, nl + 1);
      try {
        return nlohmann::json::parse(line);
      } catch (const nlohmann::json::exception &) {
        continue; // not ours (a library's line on stdout): skip it
      }
    }
    if (process::read_before(p.from.get(), p.pending, deadline) != process::read_step::data)
      return std::nullopt;
  }
}

bool send(piece_process &p, const std::string &command) {
  return process::write_all(p.to.get(), command + "\n");
}

/// How process `p` ended, waiting up to `wait` for it: "ended with exit N", "ended with signal N
/// (NAME)", or "stopped answering" (still running).
std::string how_it_ended(piece_process &p,
                         std::chrono::milliseconds wait = std::chrono::milliseconds(2000)) {
  if (const std::optional<process::end_status> e = p.proc.wait_for(wait))
    return "ended with " + process::describe(*e);
  return "stopped answering";
}

/// Sends `command` to process `i` and returns its answer; throws error naming the piece and its
/// stderr when it does not answer as it should.
nlohmann::json ask(std::vector<std::unique_ptr<piece_process>> &procs, std::size_t i,
                   const std::string &command, std::chrono::milliseconds timeout) {
  piece_process &p = *procs[i];
  std::optional<nlohmann::json> a;
  if (send(p, command))
    a = read_answer(p, timeout);
  if (!a || a->contains("error"))
    throw error(CUDA_ERROR_UNKNOWN, api,
                fmt::format("the process of piece {} {} at '{}'; its stderr:{}", i,
                            a ? "answered " + a->dump() : how_it_ended(p), command,
                            p.stderr_tail()));
  return *a;
}

struct piece_plan {
  std::string label;
  unsigned sms = 0;
};

fill_span span_of(const nlohmann::json &a) {
  return {a.at("start_ns").get<double>(), a.at("end_ns").get<double>()};
}

} // namespace

int verify_processes(const process_verify_options &opt) {
  const partition_request &request = opt.request;
  const std::string split = request.to_string(); // what each piece's greenctx run is given
  const driver_info drv = query_driver();
  const int count = device::count();
  if (opt.device >= count)
    resolve_device_list(std::vector<int>{opt.device}, count, api); // throws, with the valid ones
  const split_flags flags =
      opt.ignore_coscheduling ? split_flags::ignore_sm_coscheduling : split_flags::none;

  // The pieces as the split gives them here; each process makes its own and is checked against
  // these. The device is let go before the processes start.
  std::vector<piece_plan> pieces;
  std::optional<bool> mps;
  nlohmann::json environment;
  {
    const device dev(opt.device);
    refuse_mps_percentage(dev, api);
    mps = mps_active(dev);
    environment = environment_json(drv, dev);
    const described_partitions described = describe_partitions(dev, request, flags);
    for (const auto &p : described.parts)
      pieces.push_back({p.rest ? "rest" : std::to_string(p.requested), p.desc.sm_count()});
  }
  const bool mps_on = mps.value_or(false);
  // What is about to run, before the minutes it takes (stderr: stdout is the report).
  fmt::print(stderr,
             "greenctx verify {} --processes on {}: one process per piece (greenctx run --split "
             "{} --piece I)\n",
             split, report::gpu_described(environment), split);
  fmt::print(stderr, "MPS: {}\n",
             mps_on ? "active (the processes are MPS clients)"
                    : std::string("not active: the processes will take turns on the GPU and this "
                                  "check fails; ") +
                          mps_start_hint);

  std::signal(SIGPIPE, SIG_IGN); // a process that died is noticed by its answer, not by a signal
  const std::string self = self_path();
  std::vector<std::unique_ptr<piece_process>> procs;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::vector<std::string> argv = {self,       "run",
                                     "--split",  split,
                                     "--piece",  std::to_string(i),
                                     "--device", std::to_string(opt.device)};
    if (opt.ignore_coscheduling)
      argv.push_back("--ignore-coscheduling");
    argv.insert(argv.end(), {"--", self, "verify-piece", "--device", std::to_string(opt.device),
                             "--waves", std::to_string(opt.waves)});
    procs.push_back(std::make_unique<piece_process>());
    start(*procs.back(), argv);
  }
  const auto startup = std::chrono::seconds(120);
  const auto per_fill =
      std::chrono::milliseconds(30000 + 20 * static_cast<long long>(opt.waves) * opt.spin_ms);
  const long long spin_ns = static_cast<long long>(opt.spin_ms) * 1000000;
  const std::string fill = "fill " + std::to_string(spin_ns);

  std::vector<piece_measurement> m(pieces.size());
  std::vector<nlohmann::json> ready(pieces.size());
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    std::optional<nlohmann::json> a = read_answer(*procs[i], startup);
    if (!a || !a->value("ready", false))
      throw error(CUDA_ERROR_UNKNOWN, api,
                  fmt::format("the process of piece {} ({}) {} before it was ready; its stderr:{}",
                              i, pieces[i].label,
                              a ? "answered " + a->dump() : how_it_ended(*procs[i]),
                              procs[i]->stderr_tail()));
    ready[i] = *a;
    m[i].label = pieces[i].label;
    m[i].planned = pieces[i].sms;
    m[i].told = whole<unsigned>(a->at("told"));
  }
  for (std::size_t i = 0; i < pieces.size(); ++i)
    m[i].used = whole<unsigned>(ask(procs, i, "probe", per_fill).at("used"));
  for (std::size_t i = 0; i < pieces.size(); ++i)
    m[i].alone = span_of(ask(procs, i, fill, per_fill));
  // The work's size: as long alone as a fill, timed on the first piece (the blocks are the same
  // in every piece: the same waves of two blocks an SM).
  constexpr unsigned long long trial = 1ull << 16;
  const double trial_ns =
      span_of(ask(procs, 0, fmt::format("work {}", trial), per_fill)).length_ns();
  const unsigned long long iterations = std::max<unsigned long long>(
      1024,
      static_cast<unsigned long long>(static_cast<double>(trial) * opt.waves *
                                      static_cast<double>(spin_ns) / std::max(trial_ns, 1.0)));
  const std::string work = fmt::format("work {}", iterations);
  for (std::size_t i = 0; i < pieces.size(); ++i)
    m[i].work_alone = span_of(ask(procs, i, work, per_fill));
  for (unsigned r = 0; r < opt.rounds; ++r) {
    // All at once: every command is written before any answer is read.
    for (std::size_t i = 0; i < pieces.size(); ++i)
      if (!send(*procs[i], work))
        throw error(CUDA_ERROR_UNKNOWN, api,
                    fmt::format("the process of piece {} {}; its stderr:{}", i,
                                how_it_ended(*procs[i]), procs[i]->stderr_tail()));
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const std::optional<nlohmann::json> a = read_answer(*procs[i], per_fill);
      if (!a || a->contains("error"))
        throw error(CUDA_ERROR_UNKNOWN, api,
                    fmt::format("the process of piece {} {} in round {}; its stderr:{}", i,
                                a ? "answered " + a->dump() : how_it_ended(*procs[i]), r + 1,
                                procs[i]->stderr_tail()));
      m[i].together.push_back(span_of(*a));
    }
  }
  // Done: each process sees the end of its stdin and exits.
  for (auto &p : procs)
    p->to.reset();
  for (std::size_t i = 0; i < procs.size(); ++i) {
    const std::optional<process::end_status> e = procs[i]->proc.wait_for(std::chrono::seconds(30));
    if (!e || !e->succeeded())
      throw error(CUDA_ERROR_UNKNOWN, api,
                  fmt::format("the process of piece {} {} at the end; its stderr:{}", i,
                              e ? "ended with " + process::describe(*e) : "stopped answering",
                              procs[i]->stderr_tail()));
  }

  process_check_settings settings;
  settings.expected_ns = static_cast<double>(opt.waves) * static_cast<double>(spin_ns);
  settings.mps_active = mps_on;
  const process_check_report report = check_processes(m, settings);

  verification::process_results results;
  results.split = split;
  results.ignore_coscheduling = opt.ignore_coscheduling;
  results.mps_active = mps;
  results.spin_ms = opt.spin_ms;
  results.waves = opt.waves;
  results.rounds = opt.rounds;
  results.expected_ns = settings.expected_ns;
  results.iterations = iterations;
  results.pieces = m;
  for (const auto &r : ready)
    results.pids.push_back(whole<long long>(r.at("pid")));
  results.report = report;
  print_record(api, opt.output,
               verification::processes_record(results, with_date_and_command(environment)));
  return report.ok() ? exit_ok : exit_check_failed;
}

void add_verify_piece(CLI::App &app, action &run) {
  auto ordinal = std::make_shared<int>(0);
  auto waves = std::make_shared<unsigned>(2);
  auto *cmd = app.add_subcommand("verify-piece",
                                 "(internal) one piece's process of greenctx verify --processes");
  cmd->group(""); // hidden from --help
  add_device_option(*cmd, *ordinal);
  cmd->add_option("--waves", *waves)->transform(decimal(1, 64));
  cmd->callback([ordinal, waves, &run] {
    run = [ordinal, waves] { return run_piece_probe(*ordinal, *waves); };
  });
}

} // namespace greenctx::cli
