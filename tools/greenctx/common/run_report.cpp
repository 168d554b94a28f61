// SPDX-License-Identifier: Apache-2.0
#include "common/run_report.hpp"
#include "common/cli_common.hpp"

#include <run_protocol.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <optional>
#include <set>
#include <signal.h>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace greenctx::cli {
namespace {

namespace protocol = run_protocol;

// Report files of runs whose first process is gone: `greenctx run` execs the program, and its
// last process removes the report at exit, but not when it ends with _exit (as sh does) or by a
// signal. The pid in the name says whose it was; only this user's files are touched.
void remove_stale_reports(const std::string &dir) {
  DIR *d = opendir(dir.c_str());
  if (!d)
    return;
  constexpr std::string_view prefix = "greenctx-run-";
  while (const dirent *e = readdir(d)) {
    const std::string_view name = e->d_name;
    if (name.substr(0, prefix.size()) != prefix)
      continue;
    const std::string_view rest = name.substr(prefix.size());
    const std::size_t dash = rest.find('-');
    const std::optional<unsigned long long> pid =
        dash == std::string_view::npos ? std::nullopt : read_decimal(rest.substr(0, dash), INT_MAX);
    if (!pid || static_cast<pid_t>(*pid) == getpid())
      continue;
    const std::string path = dir + "/" + std::string(name);
    struct stat st {};
    if (lstat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
        kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH)
      unlink(path.c_str());
  }
  closedir(d);
}

} // namespace

std::string make_report_file() {
  const char *tmpdir = std::getenv("TMPDIR");
  const std::string dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
  remove_stale_reports(dir);
  std::string path = dir + "/greenctx-run-" + std::to_string(getpid()) + "-XXXXXX";
  const int fd = mkstemp(path.data());
  if (fd < 0)
    throw error(CUDA_ERROR_OPERATING_SYSTEM, "greenctx run",
                "cannot create a report file " + path + ": " + std::strerror(errno) +
                    " (set TMPDIR to a writable folder)");
  close(fd);
  return path;
}

run_report read_report(const std::string &path) {
  run_report out;
  std::ifstream in(path);
  std::string line;
  std::set<int> devices;
  std::set<std::string> problems;
  const auto count = [](const nlohmann::json &j, const char *field) {
    const auto it = j.find(field);
    return it != j.end() && it->is_number_unsigned() ? it->get<unsigned>() : 0u;
  };
  const auto nanoseconds = [](const nlohmann::json &j, const char *field) {
    const auto it = j.find(field);
    return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
  };
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object())
      continue;
    ++out.processes;
    if (const auto it = j.find(protocol::field_cuda_used); it != j.end() && it->is_boolean())
      out.cuda_used = out.cuda_used || it->get<bool>();
    if (const auto it = j.find(protocol::field_confined_devices); it != j.end() && it->is_array())
      for (const auto &d : *it)
        if (d.is_number_integer())
          devices.insert(d.get<int>());
    out.green_contexts += count(j, protocol::field_green_contexts);
    out.blocking_streams += count(j, protocol::field_blocking_streams);
    out.per_thread_streams += count(j, protocol::field_per_thread_streams);
    if (const std::uint64_t first = nanoseconds(j, protocol::field_first_work_ns);
        first && (!out.first_work_ns || first < out.first_work_ns))
      out.first_work_ns = first;
    out.last_sync_ns = std::max(out.last_sync_ns, nanoseconds(j, protocol::field_last_sync_ns));
    if (const auto it = j.find(protocol::field_problems); it != j.end() && it->is_array())
      for (const auto &p : *it)
        if (p.is_string())
          problems.insert(p.get<std::string>());
  }
  out.confined_devices.assign(devices.begin(), devices.end());
  out.problems.assign(problems.begin(), problems.end());
  return out;
}

} // namespace greenctx::cli
