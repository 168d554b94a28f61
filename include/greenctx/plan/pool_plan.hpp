// SPDX-License-Identifier: Apache-2.0
// The layouts of a pool (greenctx/core/pool.hpp) as text: parsing, naming and duplicate checks.
// Pure code, tested on the CPU.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include "greenctx/plan/partition_plan.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx {

/// One layout a pool should hold: its name and what it asks.
struct layout_request {
  /// The canonical name: "all", or the request as partition_request::to_string writes it
  /// ("16, rest" is named "16,rest"). Pools look layouts up by this name.
  std::string name;
  partition_request request;
  /// True for "all": one partition of every SM of the device.
  bool whole_device = false;
};

/// Parses one layout: "all" (the whole device) or a partition request ("16,rest", "8,8,rest").
/// Throws request_error (CUDA_ERROR_INVALID_VALUE) naming the offending item.
layout_request parse_layout(std::string_view text);

/// Parses a pool's layouts in order. Throws request_error when the list is empty or when two
/// entries name the same layout once written canonically ("16,rest" and "16, rest"), saying which.
std::vector<layout_request> parse_layouts(std::span<const std::string> texts);

/// The piece every split layout of a pool is made of, so that a partition of the same size at the
/// same place in two layouts ("16" in "16,rest" and in "16,8,rest") is the same pieces of the
/// same split call, byte-identical, and shares one green context: the greatest common divisor of
/// every partition's planned size over all layouts, when it is at least the minimum partition and
/// every layout can be planned with it. 0 when not (each layout then splits by its own piece), and
/// when no layout needs a split. Layouts that cannot be planned at all are left out (pool::create
/// reports them). Pure arithmetic; the driver may still give fewer pieces than planned.
unsigned pool_piece_size(std::span<const layout_request> layouts, unsigned sm_count,
                         granularity grain, split_flags flags = split_flags::none);

} // namespace greenctx
