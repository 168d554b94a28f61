// SPDX-License-Identifier: Apache-2.0
#include "greenctx/core/split.hpp"

#include "driver/driver_api.hpp"
#include "core/resources.hpp"
#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <string>
#include <vector>

namespace greenctx {
namespace {

// Checks a split request against the input before the driver sees it, so that the error says
// why (the driver answers a bare CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION).
rounded_size check_split(const sm_resource &input, unsigned min_count, split_flags flags,
                         const char *api) {
  if (input.native().type != CU_DEV_RESOURCE_TYPE_SM)
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_TYPE, api,
                        "the input is not an SM resource (default-constructed or of another type)");
  const auto &drv = detail::driver();
  if (any(flags) && drv.version < 12050)
    throw unsupported_error("split flags (IgnoreSmCoscheduling, MaxPotentialClusterSize)", 12050,
                            drv.version);
  const granularity g = input.grain(flags);
  if (min_count > input.sm_count())
    throw request_error(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, api,
                        "minCount " + std::to_string(min_count) + " is more than the input's " +
                            std::to_string(input.sm_count()) +
                            " SMs. Valid group sizes: " + valid_sizes_summary(input.sm_count(), g));
  return round_group_size(min_count, g, input.sm_count());
}

} // namespace

std::string split_result::explanation() const {
  std::string out = "asked " + std::to_string(requested_groups) + " group" +
                    (requested_groups == 1 ? "" : "s") +
                    " of >= " + std::to_string(size.requested) + " SMs: got " +
                    std::to_string(groups.size()) + " x " + std::to_string(size.size);
  if (!size.reason.empty())
    out += " (" + size.reason + ")";
  if (groups.size() < requested_groups)
    out += ", fewer groups than asked: the SMs ran out";
  out += ", " + std::to_string(remainder.sm_count()) + " SMs left";
  return out;
}

split_result split_by_count(const sm_resource &input, unsigned groups, unsigned min_count,
                            split_flags flags) {
  constexpr const char *api = "greenctx::split_by_count";
  if (groups == 0)
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "0 groups requested: ask for at least one (count_groups() only counts)");
  split_result out;
  out.requested_groups = groups;
  out.flags = flags;
  out.size = check_split(input, min_count, flags, api);

  // nbGroups is an upper bound: no more groups than the input's SMs can hold are asked for (or
  // allocated), so that UINT_MAX means "as many as fit" instead of a 600 GB allocation.
  unsigned n = std::min(groups, std::max(1u, max_groups(input.sm_count(), out.size.size)));
  std::vector<CUdevResource> raw(n);
  CUdevResource rest{};
  GREENCTX_CALL(cuDevSmResourceSplitByCount, raw.data(), &n, &input.native(), &rest,
                static_cast<unsigned>(flags), min_count);
  const std::uint64_t origin = detail::next_split_origin();
  for (unsigned i = 0; i < n; ++i)
    out.groups.push_back(detail::make_sm_resource(raw[i], input.device(), origin));
  // Read the size back: it is what the driver gave, whatever the rounding rule predicted.
  if (n > 0 && out.groups.front().sm_count() != out.size.size) {
    out.size.size = out.groups.front().sm_count();
    out.size.reason = "the driver made groups of " + std::to_string(out.size.size) + " SMs";
  }
  out.remainder = detail::make_sm_resource(rest, input.device(), origin);
  return out;
}

unsigned count_groups(const sm_resource &input, unsigned min_count, split_flags flags) {
  check_split(input, min_count, flags, "greenctx::count_groups");
  unsigned n = 0;
  GREENCTX_CALL(cuDevSmResourceSplitByCount, nullptr, &n, &input.native(), nullptr,
                static_cast<unsigned>(flags), min_count);
  return n;
}

} // namespace greenctx
