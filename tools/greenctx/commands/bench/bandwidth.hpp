// SPDX-License-Identifier: Apache-2.0
// `greenctx bench bandwidth`: the library's bandwidth curve (greenctx/measure/bandwidth.hpp), its
// options read from the command line, and its record. Pure code (CPU-tested); bench.cpp measures.
#pragma once

#include "report/record.hpp"

#include <greenctx/measure/bandwidth.hpp>

#include <nlohmann/json.hpp>

#include <string_view>
#include <vector>

namespace greenctx::cli::bench::bandwidth {

/// Parses --ops: read, write and copy separated by commas, each once. Throws request_error naming
/// the entry and what would work.
std::vector<measure::memory_op> parse_ops(std::string_view text);
/// Parses --levels: dram and l2 separated by commas, each once. Throws request_error.
std::vector<measure::memory_level> parse_levels(std::string_view text);

/// --quick's SM counts: of `made` (the N,rest splits of the GPU, increasing), the first, the last
/// and two between them, about a third and two thirds of the way.
std::vector<unsigned> quick_sizes(const std::vector<unsigned> &made);

/// The smallest SM count whose rate alone reaches `share` of the whole device's, for one level and
/// op, or 0 when none does (or the whole device was not measured).
unsigned sms_reaching(const measure::bandwidth_result &r, measure::memory_level level,
                      measure::memory_op op, double share);

/// The record (kind "bench-bandwidth", schema 1). Config: SM counts, ops, levels, buffer, repeats,
/// beside. Values: the device's SMs and L2, and per level and op the whole device's GB/s and the
/// SMs that reach 90% of it. Table "curve" (the first, so the CSV): one row per level, op and SM
/// count: GB/s alone, beside its rest doing the same, the rest's alone and beside, the two
/// together, whether the sides overlapped; footprint and passes as detail. Figures: GB/s alone and
/// beside against SMs, one line per level and op (log scale). Notes: per level and op, the whole
/// device's rate, the SMs that reach 90% of it, and what the fewest SMs keep beside their rest.
report::record bandwidth_record(const measure::bandwidth_result &r,
                                const nlohmann::json &environment);

} // namespace greenctx::cli::bench::bandwidth
