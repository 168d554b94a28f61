// SPDX-License-Identifier: Apache-2.0
// Whole numbers as people type them: decimal digits and nothing else. One rule for every list of SM
// counts ("16,rest", scale's --sms), every integer option of the CLI (through cli::decimal,
// cli_common.hpp) and every entry of a list the CLI parses itself (run's --device), so that
// "--sms 016" is 16 everywhere and "0x10", "-1", "+5", "1e3" or " 16" are refused everywhere,
// before any driver call. Header-only and pure.
#pragma once

#include "greenctx/cxx_standard.hpp"

#include <climits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace greenctx {

/// Reads `text` as a whole number written in decimal: one or more of the digits 0-9 and nothing
/// else. Leading zeros are read as decimal ("016" is 16, never octal). nullopt for anything else
/// (empty, a sign, "0x10", "1e3", "1.5", spaces) or a value above `max`.
inline std::optional<unsigned long long> read_decimal(std::string_view text,
                                                      unsigned long long max = ULLONG_MAX) {
  if (text.empty())
    return std::nullopt;
  unsigned long long value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    const unsigned digit = static_cast<unsigned>(c - '0');
    if (digit > max || value > (max - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

/// Why `text` is not a decimal whole number from `min` to `max` ("" when it is one), worded to
/// follow the name of what was typed: "--sms: '0x10' is not ...".
inline std::string decimal_problem(std::string_view text, unsigned long long min,
                                   unsigned long long max) {
  const std::string range = "from " + std::to_string(min) + " to " + std::to_string(max);
  if (text.empty())
    return "a whole number " + range + " is needed, and the value is empty";
  if (text.find_first_not_of("0123456789") != std::string_view::npos)
    return "'" + std::string(text) +
           "' is not a whole number in decimal: write it with the digits 0-9 only (no sign, "
           "spaces, 0x, exponent or decimal point), " +
           range;
  const std::optional<unsigned long long> value = read_decimal(text, max);
  if (!value || *value < min)
    return "'" + std::string(text) + "' is out of range: give a whole number " + range;
  return {};
}

/// `s` without the spaces and tabs around it.
inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// The entries of a list separated by commas, each trimmed of blanks ("8, 16" is {"8", "16"}).
/// An entry may be empty ("8,,16"): the caller says why that is wrong, in its own words.
inline std::vector<std::string_view> list_entries(std::string_view text) {
  std::vector<std::string_view> entries;
  std::size_t start = 0;
  for (;;) {
    const std::size_t comma = text.find(',', start);
    entries.push_back(trim_blanks(
        text.substr(start, comma == std::string_view::npos ? text.npos : comma - start)));
    if (comma == std::string_view::npos)
      return entries;
    start = comma + 1;
  }
}

} // namespace greenctx
