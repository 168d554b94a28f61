// SPDX-License-Identifier: Apache-2.0
// What `greenctx split` found, as a record of the report model (report/record.hpp): pure code, so
// that the CPU tests check it.
#pragma once

#include "report/record.hpp"

#include <greenctx/plan/group_plan.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace greenctx::cli::split_report {

/// What a real split's group turned out to be on the hardware.
struct group_check {
  unsigned context_sms = 0;       ///< read back from its green context
  unsigned sms_used = 0;          ///< distinct %smid of a probe on it
  unsigned clusters = 0;          ///< clusters of its co-scheduled count that fit at once
  unsigned clusters_promised = 0; ///< what its co-scheduled count promises (0: none)
  bool ok() const { return sms_used <= context_sms && clusters >= clusters_promised; }
};

/// The record (kind "split") of `r`, the split of `request`: how the split was made, a table
/// "groups" (the CSV one: each group's parameters, what it got, its pieces and, where `checks` has
/// one per group, its check), the remainder, and notes (each group's note, the advice, every failed
/// check, the verdict). `checks` is empty for a dry run and for a split whose groups were not all
/// made. `environment` is the JSON of environment_json with the run's date and command.
report::record split_record(const std::string &request, const group_split_result &r,
                            const std::vector<group_check> &checks,
                            const nlohmann::json &environment);

/// Every group made and every check passed.
bool split_ok(const group_split_result &r, const std::vector<group_check> &checks);

} // namespace greenctx::cli::split_report
