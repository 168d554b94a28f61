// SPDX-License-Identifier: Apache-2.0
#include "greenctx/plan/partition_plan.hpp"

#include "greenctx/plan/decimal.hpp"
#include "greenctx/plan/error.hpp"

#include <optional>
#include <numeric>

namespace greenctx {
namespace {

[[noreturn]] void reject(const char *api, CUresult code, const std::string &message) {
  throw request_error(code, api, message);
}

constexpr unsigned long long max_request_sms = 1u << 20; // far above any GPU

constexpr const char *parse_api = "greenctx::parse_partition_request";
constexpr const char *plan_api = "greenctx::plan_partitions";

// An SM resource of `sms` SMs that only the arithmetic sees (no driver made it).
sm_resource arithmetic_resource(unsigned sms, granularity grain) {
  CUdevResource raw{};
  raw.type = CU_DEV_RESOURCE_TYPE_SM;
  raw.sm.smCount = sms;
  return sm_resource(raw, 0, grain, 0);
}

} // namespace

std::string partition_request::to_string() const {
  std::string out;
  for (unsigned c : counts)
    out += (out.empty() ? "" : ",") + std::to_string(c);
  if (rest)
    out += out.empty() ? "rest" : ",rest";
  return out;
}

partition_request parse_partition_request(std::string_view text) {
  partition_request request;
  const std::string_view whole = trim_blanks(text);
  if (whole.empty())
    reject(parse_api, CUDA_ERROR_INVALID_VALUE,
           "empty split: give SM counts separated by commas, optionally ending in 'rest' "
           "(for example 16,rest or 8,8,rest)");
  unsigned index = 0;
  for (const std::string_view item : list_entries(whole)) {
    ++index;
    const std::string where = "item " + std::to_string(index) + " of '" + std::string(whole) + "'";
    if (request.rest)
      reject(parse_api, CUDA_ERROR_INVALID_VALUE,
             where + ": 'rest' must be the last item (it takes the SMs the others leave)");
    if (item.empty())
      reject(parse_api, CUDA_ERROR_INVALID_VALUE, where + " is empty: remove the extra comma");
    if (item == "rest") {
      request.rest = true;
      continue;
    }
    if (item.front() == '-')
      reject(parse_api, CUDA_ERROR_INVALID_VALUE,
             where + " is negative (" + std::string(item) + "): SM counts are positive");
    if (item.find_first_not_of("0123456789") != std::string_view::npos)
      reject(parse_api, CUDA_ERROR_INVALID_VALUE,
             where + " ('" + std::string(item) + "') is neither a whole number of SMs nor 'rest'");
    const std::optional<unsigned long long> value = read_decimal(item, max_request_sms);
    if (!value)
      reject(parse_api, CUDA_ERROR_INVALID_VALUE,
             where + " (" + std::string(item) + ") is far larger than any GPU's SM count");
    if (*value == 0)
      reject(parse_api, CUDA_ERROR_INVALID_VALUE,
             where + " asks for 0 SMs: every partition needs at least the minimum partition "
                     "size (8 on CC 9.0)");
    request.counts.push_back(static_cast<unsigned>(*value));
  }
  return request;
}

partition_plan plan_partitions(const partition_request &request, unsigned sm_count,
                               granularity grain, split_flags flags, unsigned piece_size) {
  partition_plan plan;
  plan.device_sms = sm_count;
  plan.grain = grain;
  plan.flags = flags;
  const std::string valid = valid_sizes_summary(sm_count, grain);

  unsigned total = 0;
  unsigned index = 0;
  for (unsigned requested : request.counts) {
    ++index;
    // A single partition may be the whole device even off the alignment ("130" -> all 132).
    const bool alone = request.counts.size() == 1;
    const rounded_size r =
        alone ? round_group_size(requested, grain, sm_count) : round_group_size(requested, grain);
    if (r.size > sm_count)
      reject(plan_api, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
             "partition " + std::to_string(index) + " asks " + std::to_string(requested) + " SMs" +
                 (r.size != requested ? " (" + std::to_string(r.size) + " after rounding)" : "") +
                 " but the GPU has " + std::to_string(sm_count) + ". Valid sizes: " + valid);
    total += r.size;
    plan.parts.push_back({requested, r.size, false, 0, 0, r.reason});
  }
  if (total > sm_count) {
    std::string sizes;
    for (const auto &p : plan.parts)
      sizes += (sizes.empty() ? "" : " + ") + std::to_string(p.planned);
    reject(plan_api, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
           "the partitions need " + sizes + " = " + std::to_string(total) +
               " SMs after rounding to the alignment of " + std::to_string(grain.alignment) +
               ", but the GPU has " + std::to_string(sm_count) + ". Ask for " +
               std::to_string(sm_count - sm_count % std::max(1u, grain.alignment)) +
               " SMs or fewer in all");
  }
  if (request.rest && total == sm_count)
    reject(plan_api, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
           "the partitions take all " + std::to_string(sm_count) +
               " SMs: nothing is left for 'rest'. Remove 'rest' or ask for fewer SMs");

  if (plan.parts.empty() || (plan.parts.size() == 1 && plan.parts[0].planned == sm_count)) {
    // "rest" alone, or one partition of every SM: the device's resource as it is, no split.
    if (plan.parts.empty())
      plan.parts.push_back({0, sm_count, true, 0, 0, {}});
    return plan;
  }
  // One split call gives equal pieces; partitions of different sizes take several pieces each.
  unsigned piece = 0;
  for (const auto &p : plan.parts)
    piece = std::gcd(piece, p.planned);
  if (piece < grain.min_partition)
    reject(plan_api, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
           "sizes " + request.to_string() + " have no common piece of at least " +
               std::to_string(grain.min_partition) +
               " SMs (the minimum partition), so they cannot come from one split. Use sizes that "
               "are multiples of " +
               std::to_string(grain.min_partition));
  if (piece_size != 0) {
    if (piece_size < grain.min_partition || piece % piece_size != 0)
      reject(plan_api, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
             "pieces of " + std::to_string(piece_size) + " SMs were asked for, but sizes " +
                 request.to_string() + " need a piece that divides each of them (" +
                 std::to_string(piece) + " does) and has at least " +
                 std::to_string(grain.min_partition) + " SMs (the minimum partition)");
    piece = piece_size;
  }
  plan.piece_size = piece;
  // Which pieces each partition takes is the heterogeneous-split planner's work, here on the
  // arithmetic of a split (as many pieces as fit), as partition_set does on the driver.
  std::vector<sm_group_params> params = to_group_params(plan);
  const unsigned fit = max_groups(sm_count, piece);
  split_backend arithmetic;
  arithmetic.split = [&](const sm_resource &input, unsigned unit, bool) {
    const unsigned n = max_groups(input.sm_count(), unit);
    return std::pair{std::vector<sm_resource>(n, arithmetic_resource(unit, grain)),
                     arithmetic_resource(input.sm_count() - n * unit, grain)};
  };
  const group_split_result made =
      plan_group_split(arithmetic_resource(sm_count, grain), params, {split_unit_of(plan)},
                       group_limits{sm_count, grain.alignment, 0}, arithmetic, true);
  unsigned needed = 0;
  for (const auto &p : plan.parts)
    needed += p.planned / piece;
  if (!made.all_made())
    reject(plan_api, CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION,
           "this needs " + std::to_string(needed) + " pieces of " + std::to_string(piece) +
               " SMs from one split, but at most " + std::to_string(fit) + " fit in " +
               std::to_string(sm_count) + " SMs");
  for (std::size_t i = 0; i < plan.parts.size(); ++i) {
    plan.parts[i].first_piece = plan.groups;
    plan.parts[i].pieces = made.outcomes[i].obtained / piece;
    plan.groups += plan.parts[i].pieces;
  }
  if (request.rest)
    plan.parts.push_back({0, sm_count - total, true, 0, 0, {}});
  return plan;
}

std::vector<sm_group_params> to_group_params(const partition_plan &plan) {
  std::vector<sm_group_params> params;
  for (const auto &p : plan.parts)
    if (!p.rest) // a partition promises no clusters: the smallest co-scheduled unit, 2
      params.push_back({p.planned, 2, 2, 0});
  return params;
}

split_unit split_unit_of(const partition_plan &plan) {
  return {plan.piece_size, any(plan.flags & split_flags::ignore_sm_coscheduling)};
}

} // namespace greenctx
