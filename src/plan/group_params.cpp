// SPDX-License-Identifier: Apache-2.0
#include "greenctx/plan/group_params.hpp"
#include "greenctx/plan/decimal.hpp"

#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <optional>
#include <vector>

namespace greenctx {
namespace {

constexpr const char *api = "greenctx::apply_group_defaults";

[[noreturn]] void reject(CUresult code, std::size_t index, const std::string &why) {
  throw request_error(code, api, "group " + std::to_string(index) + ": " + why);
}

std::string join(const std::vector<unsigned> &values) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i)
    out += (i == 0 ? "" : i + 1 == values.size() ? " or " : ", ") + std::to_string(values[i]);
  return out;
}

// The valid co-scheduled counts (even, 2..max) that divide `sm_count`.
std::vector<unsigned> coscheduled_dividing(unsigned sm_count, const group_limits &limits) {
  std::vector<unsigned> out;
  for (unsigned c = 2; c <= limits.max_coscheduled(); c += 2)
    if (sm_count % c == 0)
      out.push_back(c);
  return out;
}

} // namespace

namespace {

// A whole number in [0, 2^20] written in decimal digits only (read_decimal), or nullopt.
std::optional<unsigned> read_count(std::string_view s) {
  const std::optional<unsigned long long> v = read_decimal(s, 1u << 20);
  return v ? std::optional<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
}

} // namespace

std::vector<sm_group_params> parse_group_params(std::string_view text) {
  constexpr const char *parse_api = "greenctx::parse_group_params";
  std::vector<sm_group_params> groups;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = text.find_first_not_of(" \t,", pos);
    if (start == std::string_view::npos)
      break;
    const std::size_t end = std::min(text.find_first_of(" \t,", start), text.size());
    const std::string_view group = text.substr(start, end - start);
    pos = end;
    const std::string where =
        "group " + std::to_string(groups.size()) + " ('" + std::string(group) + "')";
    sm_group_params p;
    std::size_t item_start = 0;
    bool first = true;
    while (item_start <= group.size()) {
      const std::size_t colon = std::min(group.find(':', item_start), group.size());
      const std::string_view item = group.substr(item_start, colon - item_start);
      item_start = colon + 1;
      if (first) {
        const auto n = read_count(item);
        if (!n)
          throw request_error(CUDA_ERROR_INVALID_VALUE, parse_api,
                              where + ": '" + std::string(item) +
                                  "' is not an SM count (a whole number; 0 for discovery)");
        p.sm_count = *n;
        first = false;
      } else if (item == "backfill") {
        p.flags |= sm_group_backfill;
      } else if (item.rfind("cosched=", 0) == 0 || item.rfind("pref=", 0) == 0) {
        const bool cosched = item[0] == 'c';
        const auto n = read_count(item.substr(cosched ? 8 : 5));
        if (!n)
          throw request_error(CUDA_ERROR_INVALID_VALUE, parse_api,
                              where + ": '" + std::string(item) + "' needs a whole number");
        (cosched ? p.coscheduled_sm_count : p.preferred_coscheduled_sm_count) = *n;
      } else {
        throw request_error(CUDA_ERROR_INVALID_VALUE, parse_api,
                            where + ": unknown option '" + std::string(item) +
                                "' (options: cosched=N, pref=N, backfill)");
      }
      if (colon == group.size())
        break;
    }
    groups.push_back(p);
  }
  if (groups.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, parse_api,
                        "no groups: give at least one, e.g. '16:cosched=2 0:backfill'");
  return groups;
}

std::string to_string(const sm_group_params &p) {
  return "{" + std::to_string(p.sm_count) + ", " + std::to_string(p.coscheduled_sm_count) + ", " +
         std::to_string(p.preferred_coscheduled_sm_count) + ", " + std::to_string(p.flags) + "}";
}

unsigned group_limits::max_coscheduled() const {
  return cc_major >= 9 ? 32u : 2u;
}

group_limits make_group_limits(unsigned input_sms, granularity device_grain, int cc_major) {
  return {input_sms, device_grain.alignment, cc_major};
}

std::string sm_count_problem(const sm_group_params &p, const group_limits &limits) {
  const unsigned n = p.sm_count, c = p.coscheduled_sm_count;
  if (n == 0)
    return {}; // discovery
  const bool backfill = p.flags & sm_group_backfill;
  if (n % 2 != 0) {
    std::vector<unsigned> even;
    if (n > 1)
      even.push_back(n - 1);
    if (n + 1 <= limits.input_sms)
      even.push_back(n + 1);
    return "smCount " + std::to_string(n) + " is odd: SM counts are even (use " +
           (even.empty() ? std::string("an even count") : join(even)) + ")";
  }
  if (n > limits.input_sms)
    return "smCount " + std::to_string(n) + " is more than the input's " +
           std::to_string(limits.input_sms) + " SMs (use 0 to take as many as fit)";
  if (backfill && n < c)
    return "smCount " + std::to_string(n) + " is below coscheduledSmCount " + std::to_string(c) +
           ": with Backfill the count must be at least the co-scheduled count (use " +
           std::to_string(c) + ", or coscheduledSmCount " + std::to_string(n) + ")";
  if (!backfill && n % c != 0) {
    const unsigned below = n / c * c, above = below + c;
    std::vector<unsigned> sizes;
    if (below >= 2)
      sizes.push_back(below);
    if (above <= limits.input_sms)
      sizes.push_back(above);
    std::string why = "smCount " + std::to_string(n) + " is not a multiple of coscheduledSmCount " +
                      std::to_string(c) + ": use " +
                      (sizes.empty() ? std::string("another count") : join(sizes));
    const auto dividing = coscheduled_dividing(n, limits);
    if (!dividing.empty())
      why += ", or coscheduledSmCount " + join(dividing) +
             (dividing.back() == 2 && dividing.size() == 1 ? " (clusters of at most 2)" : "");
    return why + ", or set Backfill (then at least " + std::to_string(c) + ")";
  }
  return {};
}

void apply_group_defaults(std::span<sm_group_params> groups, const group_limits &limits) {
  if (groups.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api, "nbGroups is 0: ask for at least one group");
  const unsigned max_c = limits.max_coscheduled();
  for (std::size_t i = 0; i < groups.size(); ++i) {
    sm_group_params &p = groups[i];
    if (p.flags & ~sm_group_backfill)
      reject(CUDA_ERROR_INVALID_VALUE, i,
             "unknown flags " + std::to_string(p.flags) + ": the only flag is Backfill (1)");
    if (p.coscheduled_sm_count == 0)
      p.coscheduled_sm_count = limits.device_alignment;
    const unsigned c = p.coscheduled_sm_count;
    if (c % 2 != 0 || c > max_c)
      reject(
          CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, i,
          "coscheduledSmCount " + std::to_string(c) + " is not valid: it is even, from 2 to " +
              std::to_string(max_c) +
              (limits.cc_major >= 9 ? std::string() : " (no thread-block clusters below CC 9.0)") +
              " (use " + std::to_string(c % 2 ? std::max(2u, c - 1) : max_c) + ")");
    if (p.preferred_coscheduled_sm_count == 0)
      p.preferred_coscheduled_sm_count =
          limits.device_alignment % c == 0 ? std::max(limits.device_alignment, c) : c;
    const unsigned pref = p.preferred_coscheduled_sm_count;
    if (pref % c != 0)
      reject(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, i,
             "preferredCoscheduledSmCount " + std::to_string(pref) +
                 " is not a multiple of coscheduledSmCount " + std::to_string(c) + " (use " +
                 std::to_string(pref < c ? c : pref / c * c) + " or 0 for the default)");
    if (const std::string why = sm_count_problem(p, limits); !why.empty())
      reject(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, i, why);
  }
}

unsigned clusters_promised(unsigned sms, unsigned coscheduled, bool backfill) noexcept {
  if (coscheduled < 2)
    return 0;
  return backfill ? 1 : sms / coscheduled;
}

} // namespace greenctx
