// SPDX-License-Identifier: Apache-2.0
// The preload library's settings (tools/preload/settings.cpp) from any environment of greenctx
// run's protocol: the input is the variables' values separated by NUL bytes, in the order below (a
// value past the input's end is unset). What must hold: a malformed value leaves the library
// inactive and says why; an active one confines some SMs or a piece and says no error; the SM
// count, the piece and the devices are what the text says.
#include "fuzz_common.hpp"

#include "preload/report.hpp"
#include "run_protocol.hpp"

#include <cstring>
#include <map>
#include <string>
#include <vector>

namespace {

namespace rp = greenctx::run_protocol;

const char *const names[] = {rp::env_sms,    rp::env_devices,  rp::env_split_flags,
                             rp::env_split,  rp::env_piece,    rp::env_strict,
                             rp::env_report, rp::env_root_pid, rp::env_quiet,
                             rp::env_debug,  rp::env_measure,  rp::env_real_sm_count};

std::map<std::string, std::string> current; // the environment of one input

const char *lookup(const char *name) {
  const auto it = current.find(name);
  return it == current.end() ? nullptr : it->second.c_str();
}

// The reference reading of a positive count: at most 9 decimal digits.
long count_of(const std::string &v) {
  if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stol(v);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  current.clear();
  std::size_t at = 0;
  for (const char *name : names) {
    if (at > size)
      break;
    const void *nul = std::memchr(data + at, 0, size - at);
    const std::size_t end = nul ? static_cast<const unsigned char *>(nul) - data : size;
    current[name] = std::string(reinterpret_cast<const char *>(data + at), end - at);
    at = end + 1;
  }
  const greenctx::preload::settings s = greenctx::preload::read_settings(lookup);
  if (!s.error.empty() && s.active)
    fuzz::finding("active with an error: " + s.error);
  if (s.active && s.sms == 0 && s.split.empty())
    fuzz::finding("active with neither an SM count nor a split");
  if (s.active && !s.split.empty() && s.split != current[rp::env_split])
    fuzz::finding("a split that is not the variable's");
  if (s.active && current.count(rp::env_sms) && s.sms != count_of(current[rp::env_sms]))
    fuzz::finding("an SM count that is not the variable's: " + std::to_string(s.sms));
  if (s.active && !s.split.empty() &&
      static_cast<long>(s.piece) != count_of(current[rp::env_piece]))
    fuzz::finding("a piece that is not the variable's");
  if (s.active && !s.all_devices && s.devices == 0)
    fuzz::finding("confining a list of no device");
  for (int d = 0; d < 64 && s.active && !s.all_devices; ++d)
    if (s.confines(d) != (((s.devices >> d) & 1ull) != 0))
      fuzz::finding("confines() disagrees with the device bits");
  if (s.active)
    (void)s.confinement(); // a message for any setting
  return 0;
}
