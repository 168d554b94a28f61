// SPDX-License-Identifier: Apache-2.0
// What the standalone measurement programs (benchmarks/launch_pairs.cu, benchmarks/process_pair.cu,
// tests/run/overhead.cu) share: bad usage ends the program with exit 2 and the usage text, whole
// numbers are read in decimal with a lower bound, quantiles are interpolated, and driver functions
// are found through the CUDA runtime (so that the programs need not link libcuda). Header-only:
// the programs know nothing of greenctx and link none of it.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

/// Ends the program with exit 3, naming the call and its status, when `call` (of the CUDA runtime
/// or driver) does not return 0. `me` is the program's program_args::program.
#define PROGRAM_CHECK(me, call)                                                                    \
  do {                                                                                             \
    const auto rc_ = (call);                                                                       \
    if (rc_ != 0) {                                                                                \
      std::fprintf(stderr, "%s: %s failed (%d)\n", (me).name, #call, static_cast<int>(rc_));       \
      std::exit(3);                                                                                \
    }                                                                                              \
  } while (0)

namespace program_args {

/// The program's name in messages and its usage text, set once by main's file.
struct program {
  const char *name;
  const char *usage;
};

/// "NAME: WHY" and the usage on stderr, then exit 2.
[[noreturn]] inline void bad_usage(const program &p, const std::string &why) {
  std::fprintf(stderr, "%s: %s\n%s", p.name, why.c_str(), p.usage);
  std::exit(2);
}

/// The first argument, which names the mode: with --help or -h the usage on stdout and exit 0;
/// none, or one not in `modes`, is bad usage.
inline std::string mode_of(const program &p, int argc, char **argv,
                           std::initializer_list<const char *> modes) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "--help" || mode == "-h") {
    std::printf("%s", p.usage);
    std::exit(0);
  }
  for (const char *m : modes)
    if (mode == m)
      return mode;
  bad_usage(p, mode.empty() ? "no mode" : "unknown mode '" + mode + "'");
}

/// `text` as a whole number in decimal, at least `least`; anything else is bad usage naming
/// `what`.
inline long whole(const program &p, const char *text, const char *what, long least) {
  char *end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (!*text || *end || v < least)
    bad_usage(p, std::string(what) + " must be a whole number >= " + std::to_string(least) +
                     ", not '" + text + "'");
  return v;
}

/// The q-quantile of `v` (not empty), interpolated between neighbours.
inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(at);
  const std::size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (v[hi] - v[lo]) * (at - static_cast<double>(lo));
}

/// A driver function at the ABI of `version` as the program sees it (through the runtime: under
/// greenctx run, its hook), or null when this driver lacks it.
template <class Fn> Fn driver_fn(const char *name, unsigned version) {
  void *p = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  if (cudaGetDriverEntryPointByVersion(name, &p, version, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    return nullptr;
  return reinterpret_cast<Fn>(p);
}

} // namespace program_args
