// greenctx tune's report: a tune result as the report model's record (report/record.hpp), and the
// tune JSON files written before the record (schema 1) read back into a result.
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

/// A tune JSON file of schema 1 (greenctx tune before the report model) as a result, its
/// objective's description in `objective`. Rates were saved in the background's unit (its scale
/// 1); the p99 intervals and the repeat were not measured then. Throws nlohmann::json::exception
/// for a document of another shape.
measure::tune_result tune_result_from_schema1(const nlohmann::json &j, std::string &objective,
                                              std::vector<report::quantity> &environment);

} // namespace greenctx::cli
