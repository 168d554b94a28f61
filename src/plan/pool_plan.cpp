// SPDX-License-Identifier: Apache-2.0
#include "greenctx/plan/pool_plan.hpp"

#include "greenctx/plan/error.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <optional>

namespace greenctx {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

} // namespace

layout_request parse_layout(std::string_view text) {
  layout_request out;
  if (trimmed(text) == "all") {
    out.name = "all";
    out.request.rest = true; // one partition of what no other partition takes: every SM
    out.whole_device = true;
    return out;
  }
  try {
    out.request = parse_partition_request(text);
  } catch (const request_error &e) {
    throw request_error(e.code(), "greenctx::parse_layout",
                        "layout '" + std::string(text) + "': " + e.what() +
                            "; a layout is 'all' (the whole device) or such a split");
  }
  out.name = out.request.to_string();
  return out;
}

std::vector<layout_request> parse_layouts(std::span<const std::string> texts) {
  constexpr const char *api = "greenctx::parse_layouts";
  if (texts.empty())
    throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                        "no layouts: give at least one, for example \"16,rest\" or \"all\"");
  std::vector<layout_request> out;
  for (const auto &text : texts) {
    layout_request l = parse_layout(text);
    const auto same = std::find_if(out.begin(), out.end(),
                                   [&](const layout_request &o) { return o.name == l.name; });
    if (same != out.end())
      throw request_error(CUDA_ERROR_INVALID_VALUE, api,
                          "layout '" + text + "' is given twice (as '" + l.name + "', layout " +
                              std::to_string(same - out.begin()) + "): give each layout once");
    out.push_back(std::move(l));
  }
  return out;
}

unsigned pool_piece_size(std::span<const layout_request> layouts, unsigned sm_count,
                         granularity grain, split_flags flags) {
  const auto plan_of = [&](const layout_request &l,
                           unsigned piece) -> std::optional<partition_plan> {
    try {
      return plan_partitions(l.request, sm_count, grain, flags, piece);
    } catch (const request_error &) {
      return std::nullopt;
    }
  };
  // The layouts that need a split, and the gcd of their own pieces.
  std::vector<const layout_request *> split;
  unsigned common = 0;
  for (const auto &l : layouts)
    if (const auto plan = plan_of(l, 0); plan && plan->groups > 0) {
      split.push_back(&l);
      common = std::gcd(common, plan->piece_size);
    }
  if (common == 0 || common < grain.min_partition)
    return 0;
  for (const layout_request *l : split)
    if (!plan_of(*l, common))
      return 0;
  return common;
}

} // namespace greenctx
