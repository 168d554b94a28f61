// SPDX-License-Identifier: Apache-2.0
#include "commands/scale/sm_list.hpp"
#include "common/sm_list_option.hpp"

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

} // namespace

std::vector<unsigned> parse_sm_list(std::string_view text) {
  return cli::parse_sm_list(text, {"greenctx scale", "--sms",
                                   "e.g. --sms 8,16,32 (see greenctx info for the valid counts)",
                                   1u << 20, true});
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
