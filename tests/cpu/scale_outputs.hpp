// SPDX-License-Identifier: Apache-2.0
// greenctx scale's results rendered as the command renders them: its record (scale_record) in each
// format of the report model. For the tests of scale's reports.
#pragma once

#include "report/record.hpp"
#include "commands/scale/scale_record.hpp"

#include <string>

namespace greenctx::cli::scale {

inline std::string text_table(const results &r, const nlohmann::json &env) {
  return report::to_text(scale_record(r, env));
}
inline std::string markdown(const results &r, const nlohmann::json &env) {
  return report::to_markdown(scale_record(r, env));
}
inline std::string to_csv(const results &r) {
  return report::to_csv(scale_record(r, {}));
}
inline std::string to_svg(const results &r, const nlohmann::json &env) {
  return report::to_svg(scale_record(r, env));
}
/// The record's JSON, as --json writes it.
inline nlohmann::ordered_json record_json(const results &r, const nlohmann::json &env) {
  return report::to_json(scale_record(r, env));
}

} // namespace greenctx::cli::scale
