// SPDX-License-Identifier: Apache-2.0
// Lists of SM counts typed on the command line (scale's --sms, bench's --comm-sms and
// --shrink-to): one parser, one set of messages, each option with its own rules. Pure code.
#pragma once

#include <string_view>
#include <vector>

namespace greenctx::cli {

/// What one option accepts, and how its messages name it.
struct sm_list_rules {
  const char *api;         ///< the command, for request_error ("greenctx scale")
  const char *option;      ///< as typed ("--sms")
  const char *example;     ///< ends each message about the form ("e.g. --sms 8,16,32")
  unsigned max = 1u << 20; ///< the largest count: more is a typing mistake, not a GPU
  bool increasing = false; ///< entries must come in increasing order
};

/// Parses `text`: SM counts separated by commas (blanks around entries ignored), each decimal
/// digits only (read_decimal: "016" is 16), from 1 to rules.max, each named once, in increasing
/// order when the rules say so. Throws request_error (CUDA_ERROR_INVALID_VALUE) that names the
/// option and the entry and says what would work, for an empty list or entry, an entry that is not
/// a whole number in decimal, 0, more than rules.max, a count named twice, or one out of order.
std::vector<unsigned> parse_sm_list(std::string_view text, const sm_list_rules &rules);

} // namespace greenctx::cli
