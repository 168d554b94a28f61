// SPDX-License-Identifier: Apache-2.0
#include "common/sm_list_option.hpp"

#include <greenctx/plan/decimal.hpp>
#include <greenctx/plan/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>

namespace greenctx::cli {
namespace {

std::string join(const std::vector<unsigned> &v) {
  std::string out;
  for (unsigned x : v)
    out += (out.empty() ? "" : ",") + std::to_string(x);
  return out;
}

} // namespace

std::vector<unsigned> parse_sm_list(std::string_view text, const sm_list_rules &rules) {
  const auto reject = [&](const std::string &message) {
    throw request_error(CUDA_ERROR_INVALID_VALUE, rules.api, message);
  };
  if (trim_blanks(text).empty())
    reject(fmt::format("{} is empty: give SM counts separated by commas, {}", rules.option,
                       rules.example));
  std::vector<unsigned> counts;
  unsigned index = 0;
  for (const std::string_view item : list_entries(text)) {
    const std::string where = fmt::format("{} entry {}", rules.option, ++index);
    if (item.empty())
      reject(fmt::format("{} is empty ('{}'): separate SM counts with single commas, {}", where,
                         text, rules.example));
    if (item.find_first_not_of("0123456789") != std::string_view::npos)
      reject(fmt::format("{} ('{}') is not a whole number of SMs in decimal (digits 0-9 only: no "
                         "sign, 0x or exponent): {}",
                         where, item, rules.example));
    const std::optional<unsigned long long> value = read_decimal(item, rules.max);
    if (!value)
      reject(fmt::format("{} ({}) is more than {}, far more than any GPU's SM count", where, item,
                         rules.max));
    if (*value == 0)
      reject(fmt::format("{} asks for 0 SMs: every count needs at least the minimum partition "
                         "(8 SMs on CC 9.0)",
                         where));
    counts.push_back(static_cast<unsigned>(*value));
  }
  std::vector<unsigned> fixed = counts;
  std::sort(fixed.begin(), fixed.end());
  fixed.erase(std::unique(fixed.begin(), fixed.end()), fixed.end());
  if (!rules.increasing) { // the suggestion keeps the order given, without the repeats
    fixed.clear();
    for (unsigned c : counts)
      if (std::find(fixed.begin(), fixed.end(), c) == fixed.end())
        fixed.push_back(c);
  }
  for (std::size_t i = 0; i < counts.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (counts[i] == counts[j])
        reject(fmt::format("{} lists {} twice (entries {} and {}): name each count once; e.g. {} "
                           "{}",
                           rules.option, counts[i], j + 1, i + 1, rules.option, join(fixed)));
  if (rules.increasing)
    for (std::size_t i = 1; i < counts.size(); ++i)
      if (counts[i] < counts[i - 1])
        reject(fmt::format("{} must be in increasing order: entry {} ({}) comes after entry {} "
                           "({}); e.g. {} {}",
                           rules.option, i + 1, counts[i], i, counts[i - 1], rules.option,
                           join(fixed)));
  return counts;
}

} // namespace greenctx::cli
