// What `greenctx split` found, as a record of the report model (report/record.hpp): pure code, so
// that the CPU tests check it and --from converts the files older greenctx wrote.
#pragma once

#include "report/record.hpp"

#include <nlohmann/json.hpp>

#include <optional>
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

/// One group: its 13.1 parameters, what the split gave, and the check of a real split.
struct group {
  unsigned sm_count = 0, coscheduled = 0, preferred = 0, flags = 0; ///< the parameters
  bool backfill = false;                                            ///< flags has Backfill
  unsigned requested = 0;                                           ///< 0: as many as fit
  unsigned obtained = 0;
  bool made = false;
  unsigned split_call = 0, piece_size = 0;
  bool ignore_coscheduling_pieces = false;
  std::string pieces; ///< "14 x 8 + 4"; empty when the group was not made (or a dry run)
  std::string note;
  std::optional<group_check> check; ///< real splits whose groups were all made
};

struct results {
  std::string request;
  bool dry_run = false;
  bool native = false;      ///< the driver's cuDevSmResourceSplit
  unsigned split_calls = 0; ///< greenctx's: split-by-count calls it made
  std::vector<group> groups;
  unsigned remainder_sms = 0;
  std::string explanation, advice;
  bool all_made() const;
  /// Every group made and every check passed.
  bool ok() const;
};

/// The record (kind "split"): the request, how the split was made, a table "groups" (the CSV
/// one), the remainder, and notes (each group's note, the advice, every failed check, the
/// verdict). `environment` is the JSON of environment_json with the run's date and command.
report::record split_record(const results &r, const nlohmann::json &environment);

/// The results a file of an older greenctx holds (schema 1 and the files before it). Throws
/// nlohmann::json::exception for any other shape.
results from_json(const nlohmann::json &j);

} // namespace greenctx::cli::split_report
