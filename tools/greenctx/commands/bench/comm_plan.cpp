// SPDX-License-Identifier: Apache-2.0
// greenctx bench --comm: the modes of a run, the --sizes and --comm-sms lists, and the answers
// (pure code).
#include "commands/bench/comm.hpp"
#include "report/stats.hpp"
#include "common/sm_list_option.hpp"

#include <greenctx/plan/decimal.hpp>
#include <greenctx/plan/error.hpp>

#include <fmt/format.h>

#include <algorithm>

namespace greenctx::cli::bench::comm {
namespace {

[[noreturn]] void reject(const std::string &option, const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx bench --comm", option + ": " + message);
}

} // namespace

std::vector<mode> all_modes(const std::vector<unsigned> &ks) {
  std::vector<mode> out = {
      {mode_kind::alone, 0}, {mode_kind::shared, 0}, {mode_kind::shared_high, 0}};
  for (unsigned k : ks)
    out.push_back({mode_kind::partitioned, k});
  for (unsigned k : ks)
    out.push_back({mode_kind::partitioned_ctas, k});
  for (unsigned k : ks)
    out.push_back({mode_kind::max_ctas, k});
  return out;
}

std::vector<std::size_t> parse_sizes(std::string_view text, const char *option) {
  constexpr const char *example =
      "give byte counts separated by commas, with an optional unit K, M or G (KiB, MiB, GiB), "
      "e.g. 1M,16M,256M,1G";
  if (trim_blanks(text).empty())
    reject(option, fmt::format("the list is empty: {}", example));
  std::vector<std::size_t> out;
  unsigned index = 0;
  for (const std::string_view entry : list_entries(text)) {
    ++index;
    if (entry.empty())
      reject(option, fmt::format("entry {} of '{}' is empty: {}", index, text, example));
    const std::size_t digits = entry.find_first_not_of("0123456789");
    const std::string_view number = entry.substr(0, digits);
    const std::string_view unit = digits == entry.npos ? "" : entry.substr(digits);
    unsigned shift = 0;
    if (unit.empty() || unit == "B")
      shift = 0;
    else if (unit == "K" || unit == "KiB")
      shift = 10;
    else if (unit == "M" || unit == "MiB")
      shift = 20;
    else if (unit == "G" || unit == "GiB")
      shift = 30;
    else
      reject(option, fmt::format("entry {} ('{}'): the unit '{}' is not one of K, KiB, M, MiB, G, "
                                 "GiB (binary units); {}",
                                 index, entry, unit, example));
    constexpr unsigned long long max_bytes = 4ull << 30;
    const auto value = read_decimal(number, max_bytes);
    if (number.empty() || !value)
      reject(option, fmt::format("entry {} ('{}') is not a decimal whole number with a unit; {}",
                                 index, entry, example));
    if (*value > (max_bytes >> shift))
      reject(option,
             fmt::format("entry {} ('{}') is more than 4 GiB: give 4 B to 4 GiB", index, entry));
    const unsigned long long bytes = *value << shift;
    if (bytes < 4)
      reject(option,
             fmt::format("entry {} ('{}') is less than 4 bytes: give 4 B to 4 GiB", index, entry));
    if (bytes % 4 != 0)
      reject(option, fmt::format("entry {} ('{}') is not a multiple of 4 bytes: the all-reduce "
                                 "sums float elements of 4 bytes",
                                 index, entry));
    for (std::size_t j = 0; j < out.size(); ++j)
      if (out[j] == bytes)
        reject(option, fmt::format("{} is listed twice (entries {} and {}): name each size once",
                                   format_bytes(bytes), j + 1, index));
    out.push_back(static_cast<std::size_t>(bytes));
  }
  return out;
}

std::vector<unsigned> parse_sm_counts(std::string_view text) {
  return parse_sm_list(
      text, {"greenctx bench --comm", "--comm-sms", "e.g. --comm-sms 8,16,32", 4096, false});
}

std::vector<std::size_t> default_sizes(bool quick) {
  if (quick)
    return {std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{256} << 20};
  std::vector<std::size_t> out;
  for (std::size_t b = std::size_t{1} << 20; b <= (std::size_t{1} << 30); b *= 4)
    out.push_back(b);
  return out;
}

double bus_bandwidth_gbs(std::size_t bytes, double microseconds, int gpus) {
  if (microseconds <= 0 || gpus < 1)
    return 0;
  const double algbw = static_cast<double>(bytes) / (microseconds * 1e-6) / 1e9;
  return algbw * 2.0 * (gpus - 1) / gpus;
}

namespace {
// The SMs a point's all-reduce had: what its partition obtained (the most over the GPUs), which
// may be more than the k asked for (rounded up to the GPU's alignment); k when not recorded.
unsigned sms_of(const point &p) {
  return p.comm_sms.empty() ? p.m.k : *std::max_element(p.comm_sms.begin(), p.comm_sms.end());
}
} // namespace

std::vector<answer> answers(const results &r) {
  std::vector<answer> out;
  for (const std::size_t bytes : r.sizes) {
    answer a;
    a.bytes = bytes;
    double best = 0;
    for (const auto &p : r.points) {
      if (p.bytes != bytes || p.allreduce_us.empty() || p.m.kind == mode_kind::alone ||
          p.confined == false)
        continue;
      const double p50 = summarize(p.allreduce_us).p50;
      if (a.best_mode.empty() || p50 < best) {
        best = p50;
        a.best_mode = p.m.name();
      }
    }
    a.best_p50_us = best;
    const point *chosen = nullptr;
    const double limit = best * (1 + r.tolerance_percent / 100);
    for (const auto &p : r.points) { // the smallest k that qualifies, its faster mode
      if (p.bytes != bytes || !p.m.on_partition() || p.allreduce_us.empty() || p.confined == false)
        continue;
      const double p50 = summarize(p.allreduce_us).p50;
      const unsigned sms = sms_of(p);
      if (p50 <= limit && (!a.k || sms < *a.k || (sms == *a.k && p50 < a.k_p50_us))) {
        a.k = sms;
        a.k_p50_us = p50;
        chosen = &p;
      }
    }
    if (chosen) {
      a.k_mode = chosen->m.name();
      a.gemm_fraction = r.gemm_alone_tflops > 0 ? chosen->gemm_tflops / r.gemm_alone_tflops : 0;
    }
    if (a.best_mode.empty())
      a.text = fmt::format("{}: no mode with the GEMM running has samples: no answer",
                           format_bytes(bytes));
    else if (!a.k)
      a.text = fmt::format("{}: no k measured keeps the all-reduce within {:g}% of the best "
                           "({}, p50 {:.1f} us): give it more SMs than the largest k tried",
                           format_bytes(bytes), r.tolerance_percent, a.best_mode, best);
    else
      a.text = fmt::format(
          "{}: {} SMs suffice ({}{}): all-reduce p50 {:.1f} us, within {:g}% of the best ({}, "
          "{:.1f} us); the GEMM on the other SMs keeps {}",
          format_bytes(bytes), *a.k, a.k_mode,
          chosen->m.k != *a.k ? fmt::format(", {} asked for, rounded up", chosen->m.k) : "",
          a.k_p50_us, r.tolerance_percent, a.best_mode, best,
          a.gemm_fraction > 0 ? fmt::format("{:.0f}% of its speed alone", 100 * a.gemm_fraction)
                              : std::string("an unmeasured share of its speed"));
    out.push_back(std::move(a));
  }
  return out;
}

} // namespace greenctx::cli::bench::comm
