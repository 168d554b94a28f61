// SPDX-License-Identifier: Apache-2.0
// read_decimal and decimal_problem against a reference written here: digits only, no overflow,
// and decimal_problem is empty exactly when the value is read and within the range.
#include "fuzz_common.hpp"

#include "greenctx/plan/decimal.hpp"

#include <climits>
#include <cstring>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  if (size < 2)
    return 0;
  // The first two bytes choose the range; the rest is the text.
  const unsigned long long max = data[0] == 0xff ? ULLONG_MAX : data[0] * 1000ull + data[1];
  const unsigned long long min = data[1] % 4;
  const std::string_view text = fuzz::text(data + 2, size - 2);

  bool digits = !text.empty();
  unsigned __int128 value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      digits = false;
      break;
    }
    if (value <= ULLONG_MAX)
      value = value * 10 + static_cast<unsigned>(c - '0');
  }
  const bool in_range = digits && value <= max;
  const std::optional<unsigned long long> got = greenctx::read_decimal(text, max);
  if (got.has_value() != in_range)
    fuzz::finding("read_decimal accepts what the reference refuses, or the other way");
  if (got && *got != static_cast<unsigned long long>(value))
    fuzz::finding("read_decimal read another value");
  const std::string problem = greenctx::decimal_problem(text, min, max);
  if (problem.empty() != (in_range && value >= min))
    fuzz::finding("decimal_problem disagrees with the reference: '" + problem + "'");
  // trim_blanks leaves no blank at either end and only takes blanks away.
  const std::string_view t = greenctx::trim_blanks(text);
  if (!t.empty() && (t.front() == ' ' || t.front() == '\t' || t.back() == ' ' || t.back() == '\t'))
    fuzz::finding("trim_blanks left a blank");
  if (t.data() < text.data() || t.data() + t.size() > text.data() + text.size())
    fuzz::finding("trim_blanks went outside its input");
  return 0;
}
