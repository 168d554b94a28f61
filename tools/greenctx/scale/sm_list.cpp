#include "scale/sm_list.hpp"

#include <greenctx/plan/decimal.hpp>
#include <greenctx/plan/error.hpp>
#include <greenctx/plan/granularity.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>

namespace greenctx::cli::scale {
namespace {

[[noreturn]] void reject(const std::string &message) {
  throw request_error(CUDA_ERROR_INVALID_VALUE, "greenctx scale", message);
}

std::string join(const std::vector<unsigned> &v, const char *separator = ",") {
  std::string out;
  for (unsigned x : v)
    out += (out.empty() ? "" : separator) + std::to_string(x);
  return out;
}

// Larger than any GPU's SM count: entries above it are typing mistakes, not devices.
constexpr unsigned long long max_sms = 1u << 20;

} // namespace

std::vector<unsigned> parse_sm_list(std::string_view text) {
  constexpr const char *example = "e.g. --sms 8,16,32 (see greenctx info for the valid counts)";
  if (trim_blanks(text).empty())
    reject(fmt::format("--sms is empty: give SM counts separated by commas, {}", example));
  std::vector<unsigned> counts;
  unsigned index = 0;
  for (const std::string_view item : list_entries(text)) {
    const std::string where = fmt::format("--sms entry {}", ++index);
    if (item.empty())
      reject(fmt::format("{} is empty ('{}'): separate SM counts with single commas, {}", where,
                         text, example));
    if (item.find_first_not_of("0123456789") != std::string_view::npos)
      reject(fmt::format("{} ('{}') is not a whole number of SMs in decimal (digits 0-9 only: no "
                         "sign, 0x or exponent): {}",
                         where, item, example));
    const std::optional<unsigned long long> read = read_decimal(item, max_sms);
    if (!read)
      reject(fmt::format("{} ({}) is far more than any GPU's SM count", where, item));
    const unsigned long long value = *read;
    if (value == 0)
      reject(fmt::format("{} asks for 0 SMs: every count needs at least the minimum partition "
                         "(8 SMs on CC 9.0)",
                         where));
    counts.push_back(static_cast<unsigned>(value));
  }
  std::vector<unsigned> fixed = counts;
  std::sort(fixed.begin(), fixed.end());
  fixed.erase(std::unique(fixed.begin(), fixed.end()), fixed.end());
  for (std::size_t i = 0; i < counts.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (counts[i] == counts[j])
        reject(fmt::format("--sms lists {} twice (entries {} and {}): each count runs --repeat "
                           "times already; e.g. --sms {}",
                           counts[i], j + 1, i + 1, join(fixed)));
  for (std::size_t i = 1; i < counts.size(); ++i)
    if (counts[i] < counts[i - 1])
      reject(fmt::format("--sms must be in increasing order: entry {} ({}) comes after entry {} "
                         "({}); e.g. --sms {}",
                         i + 1, counts[i], i, counts[i - 1], join(fixed)));
  return counts;
}

void check_sm_list(const std::vector<unsigned> &counts, const std::vector<unsigned> &valid,
                   unsigned device_sms) {
  if (valid.empty())
    reject(fmt::format("the GPU has {} SMs, fewer than its minimum partition: no SM count can be "
                       "split off it",
                       device_sms));
  const std::string valid_text = "valid counts on this GPU: " + describe_counts(valid);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const unsigned n = counts[i];
    const std::string where = fmt::format("--sms entry {} ({})", i + 1, n);
    if (n > device_sms)
      reject(fmt::format("{} is more than the GPU's {} SMs; the largest valid count is {} ({})",
                         where, device_sms, valid.back(), valid_text));
    const neighbours near = nearest_valid(n, valid);
    if (near.below == near.above)
      continue; // valid
    std::string nearest;
    if (near.below && near.above)
      nearest = fmt::format("the nearest valid counts are {} and {}", *near.below, *near.above);
    else if (near.above)
      nearest = fmt::format("the smallest valid count is {}", *near.above);
    else
      nearest = fmt::format("the largest valid count is {}", *near.below);
    reject(fmt::format("{}: no split gives exactly {} SMs on this GPU; {} ({})", where, n, nearest,
                       valid_text));
  }
}

} // namespace greenctx::cli::scale
