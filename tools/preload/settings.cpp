// SPDX-License-Identifier: Apache-2.0
// The settings of `greenctx run`'s protocol (tools/run_protocol.hpp) read from the environment:
// pure code (no driver, no global state), so that the CPU tests and the fuzz target of
// tests/sanitize/ can give it any environment.
#include "report.hpp"

#include "run_protocol.hpp"

#include <cstdlib>
#include <cstring>
#include <sstream>

namespace greenctx::preload {
namespace {

namespace rp = greenctx::run_protocol;

// A decimal number of at most 9 digits, or -1.
long decimal(const std::string &s) {
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::strtol(s.c_str(), nullptr, 10);
}

} // namespace

settings read_settings(const char *(*lookup)(const char *)) {
  settings s;
  auto flag = [lookup](const char *name) {
    const char *v = lookup(name);
    return v && *v && std::strcmp(v, "0") != 0;
  };
  s.strict = flag(rp::env_strict);
  s.quiet = flag(rp::env_quiet);
  s.debug = flag(rp::env_debug);
  if (const char *v = lookup(rp::env_debug))
    s.trace_calls = std::strcmp(v, rp::debug_calls) == 0;
  s.measure = flag(rp::env_measure);
  s.real_sm_count = flag(rp::env_real_sm_count);
  s.cuda_13_1 = flag(rp::env_cuda_13_1);
  s.report = lookup(rp::env_report);
  if (const char *v = lookup(rp::env_root_pid))
    s.root_pid = decimal(v);
  const char *sms = lookup(rp::env_sms);
  const char *split = lookup(rp::env_split);
  if (!sms && !(split && *split))
    return s;
  if (sms) {
    const long n = decimal(sms);
    if (n <= 0) {
      s.error = std::string(rp::env_sms) + "='" + sms + "' is not a positive decimal number";
      return s;
    }
    s.sms = static_cast<unsigned>(n);
  }
  if (const char *v = lookup(rp::env_split_flags); v && *v) {
    const long f = decimal(v);
    if (f < 0) {
      s.error = std::string(rp::env_split_flags) + "='" + v + "' is not a decimal number";
      return s;
    }
    s.split_flags = static_cast<unsigned>(f);
  }
  if (const char *v = lookup(rp::env_split); v && *v) {
    const char *piece = lookup(rp::env_piece);
    const long i = piece ? decimal(piece) : -1;
    if (i < 0) {
      s.error = std::string(rp::env_split) + " is set but " + rp::env_piece + "='" +
                (piece ? piece : "") + "' is not a piece number";
      return s;
    }
    s.split = v;
    s.piece = static_cast<unsigned>(i);
  }
  if (const char *v = lookup(rp::env_devices); v && *v && std::strcmp(v, "all") != 0) {
    s.all_devices = false;
    std::stringstream list(v);
    std::string item;
    while (std::getline(list, item, ',')) {
      const long d = decimal(item);
      if (d < 0 || d >= 64) {
        s.error = std::string(rp::env_devices) + "='" + v + "': '" + item +
                  "' is not a device ordinal (0 to 63)";
        return s;
      }
      s.devices |= 1ull << d;
    }
  }
  s.active = true;
  return s;
}

} // namespace greenctx::preload
