// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include "run_protocol.hpp"

#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <vector>

extern char *program_invocation_short_name;

namespace greenctx::preload {
namespace {

namespace rp = greenctx::run_protocol;

std::mutex problems_mutex;
std::vector<std::string> &problem_list() {
  static auto *p = new std::vector<std::string>; // never destroyed: used until the very end
  return *p;
}

std::string json_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string device_list(unsigned long long bits) {
  std::string out;
  for (int d = 0; d < 64; ++d)
    if ((bits >> d) & 1ull)
      out += (out.empty() ? "" : ",") + std::to_string(d);
  return out;
}

// This process's line of the report.
void write_report() {
  const settings &c = config();
  if (!c.report || !*c.report)
    return;
  std::string problems;
  {
    std::lock_guard lock(problems_mutex);
    for (const auto &p : problem_list())
      problems += (problems.empty() ? "" : ",") + json_string(p);
  }
  const counters &s = stats();
  std::ostringstream line;
  line << "{\"" << rp::field_pid << "\":" << getpid() << ",\"" << rp::field_cuda_used
       << "\":" << (s.cuda_used.load() ? "true" : "false") << ",\"" << rp::field_confined_devices
       << "\":[" << device_list(s.confined_devices.load()) << "],\"" << rp::field_green_contexts
       << "\":" << s.green_contexts.load() << ",\"" << rp::field_blocking_streams
       << "\":" << s.blocking_streams.load() << ",\"" << rp::field_per_thread_streams
       << "\":" << s.per_thread_streams.load() << ",\"" << rp::field_first_work_ns
       << "\":" << s.first_work_ns.load() << ",\"" << rp::field_last_sync_ns
       << "\":" << s.last_sync_ns.load() << ",\"" << rp::field_problems << "\":[" << problems
       << "]}\n";
  // One write of the whole line to a file opened for appending: lines of processes that end
  // together do not interleave.
  if (std::FILE *f = std::fopen(c.report, "a")) {
    const std::string text = line.str();
    std::fwrite(text.data(), 1, text.size(), f);
    std::fclose(f);
  }
}

// The numbers of `"field":[...]` and `"field":N` in a report line (the library writes them, so a
// small reader is enough; the CLI reads the same lines with a JSON parser).
unsigned long long number_field(const std::string &line, const char *field) {
  const std::string key = std::string("\"") + field + "\":";
  const auto at = line.find(key);
  return at == std::string::npos ? 0 : std::strtoull(line.c_str() + at + key.size(), nullptr, 10);
}

unsigned long long device_bits(const std::string &line) {
  const std::string key = std::string("\"") + rp::field_confined_devices + "\":[";
  auto at = line.find(key);
  unsigned long long bits = 0;
  if (at == std::string::npos)
    return 0;
  const char *p = line.c_str() + at + key.size();
  while (*p && *p != ']') {
    char *end = nullptr;
    const unsigned long d = std::strtoul(p, &end, 10);
    if (end == p)
      break;
    if (d < 64)
      bits |= 1ull << d;
    p = *end == ',' ? end + 1 : end;
  }
  return bits;
}

// At the exit of the process `greenctx run` became: one summary line for all its processes.
void summarize() {
  const settings &c = config();
  if (!c.report || !*c.report)
    return;
  bool used = false;
  unsigned long long devices = 0;
  unsigned long long contexts = 0, blocking = 0, per_thread = 0, processes = 0;
  {
    std::ifstream in(c.report);
    std::string line;
    while (std::getline(in, line)) {
      ++processes;
      used = used ||
             line.find(std::string("\"") + rp::field_cuda_used + "\":true") != std::string::npos;
      devices |= device_bits(line);
      contexts += number_field(line, rp::field_green_contexts);
      blocking += number_field(line, rp::field_blocking_streams);
      per_thread += number_field(line, rp::field_per_thread_streams);
    }
  }
  unlink(c.report);
  if (c.quiet)
    return;
  const char *name = program_invocation_short_name;
  if (!used)
    std::fprintf(stderr, "greenctx run: '%s' never used CUDA: there was nothing to confine\n",
                 name);
  else if (!devices)
    std::fprintf(stderr,
                 "greenctx run: '%s' used CUDA but never made a confined device's context "
                 "current: nothing ran on %s\n",
                 name, c.confinement().c_str());
  else if (c.debug)
    std::fprintf(stderr,
                 "greenctx run: %llu process(es); device(s) %s on %s; %llu green "
                 "context(s), %llu blocking stream(s) and %llu per-thread stream(s) emulated\n",
                 processes, device_list(devices).c_str(), c.confinement().c_str(), contexts,
                 blocking, per_thread);
}

struct at_exit {
  ~at_exit() {
    if (!config().hooks())
      return;
    write_report();
    // Timing only (GREENCTX_RUN_MEASURE without GREENCTX_RUN_SMS): the caller reads the report.
    if (config().active && config().root_pid == static_cast<long>(getpid()))
      summarize();
  }
} reporter;

} // namespace

const settings &config() {
  static const settings s = [] {
    settings r = read_settings([](const char *name) -> const char * { return std::getenv(name); });
    if (!r.error.empty())
      std::fprintf(stderr, "greenctx run: %s: nothing is confined\n", r.error.c_str());
    return r;
  }();
  return s;
}

counters &stats() {
  static counters c;
  return c;
}

namespace {

// Records and prints `what` once; false when it was said before.
bool say_once(const std::string &what) {
  {
    std::lock_guard lock(problems_mutex);
    for (const auto &p : problem_list())
      if (p == what)
        return false;
    problem_list().push_back(what);
  }
  std::fprintf(stderr, "greenctx run: %s\n", what.c_str());
  return true;
}

} // namespace

void warning(const std::string &what) {
  say_once(what);
}

void problem(const std::string &what) {
  if (say_once(what) && config().strict) {
    std::fprintf(stderr, "greenctx run --strict: stopping the program (exit %d)\n",
                 rp::exit_strict);
    write_report();
    if (config().root_pid == static_cast<long>(getpid()))
      summarize();
    std::fflush(stderr);
    _exit(rp::exit_strict);
  }
}

void debug(const char *format, ...) {
  if (!config().debug)
    return;
  // One write per line, so that the lines of threads tracing at once do not interleave; the
  // thread is named as the CUDA runtime's own log (CUDA_LOG_FILE) names it.
  char head[64];
  const int n =
      std::snprintf(head, sizeof head,
                    "greenctx run [debug] [%lu]: ", static_cast<unsigned long>(pthread_self()));
  std::va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int body = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  // Whole, however long (a piece's resources in hex run to kilobytes).
  std::string line(head, static_cast<std::size_t>(std::max(n, 0)));
  if (body > 0) {
    line.resize(line.size() + static_cast<std::size_t>(body) + 1);
    std::vsnprintf(line.data() + line.size() - body - 1, static_cast<std::size_t>(body) + 1, format,
                   again);
    line.pop_back(); // vsnprintf's terminating zero
  }
  va_end(again);
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
}

} // namespace greenctx::preload
