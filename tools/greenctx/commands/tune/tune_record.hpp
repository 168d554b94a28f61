// SPDX-License-Identifier: Apache-2.0
// greenctx tune's report: a tune result as the report model's record (report/record.hpp).
#pragma once

#include "report/record.hpp"

#include <greenctx/measure/tune.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace greenctx::cli {

/// The record of a tune: the curve (the first table: per critical size its p50, p99 with its 95%
/// interval, the background's rate, samples, whether it meets the bound, the Pareto front, the
/// choice), each search's measurements in order, the answer, the repeat, the figures.
/// `objective` describes what was asked (tune_objective::describe()).
report::record tune_record(const measure::tune_result &r, std::vector<report::quantity> environment,
                           const std::string &objective);

} // namespace greenctx::cli
