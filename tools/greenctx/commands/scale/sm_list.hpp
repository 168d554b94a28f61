// SPDX-License-Identifier: Apache-2.0
// Which SM counts `greenctx scale` runs at: the --sms list, read and checked against the counts a
// split can give. Pure code: no driver.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace greenctx::cli::scale {

/// Parses `--sms` ("8,16,32") before any driver call: cli::parse_sm_list, in increasing order.
std::vector<unsigned> parse_sm_list(std::string_view text);

/// Checks parsed counts against the device: each must be at most `device_sms` and one of `valid`
/// (from valid_counts). Throws request_error naming the entry and the nearest valid counts.
void check_sm_list(const std::vector<unsigned> &counts, const std::vector<unsigned> &valid,
                   unsigned device_sms);

} // namespace greenctx::cli::scale
