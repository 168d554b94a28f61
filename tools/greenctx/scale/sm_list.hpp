// Which SM counts `greenctx scale` runs at: the --sms list, read and checked against the counts a
// split can give. Pure code: no driver.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace greenctx::cli::scale {

/// Parses `--sms` ("8,16,32"; spaces around entries are ignored) before any driver call. Each
/// entry is decimal digits only, as every number of the CLI (read_decimal: "016" is 16).
/// Throws request_error (code CUDA_ERROR_INVALID_VALUE) for an empty list or entry, an entry that
/// is not a whole number in decimal, 0, a count listed twice, or a list out of increasing order.
std::vector<unsigned> parse_sm_list(std::string_view text);

/// Checks parsed counts against the device: each must be at most `device_sms` and one of `valid`
/// (from valid_counts). Throws request_error naming the entry and the nearest valid counts.
void check_sm_list(const std::vector<unsigned> &counts, const std::vector<unsigned> &valid,
                   unsigned device_sms);

} // namespace greenctx::cli::scale
