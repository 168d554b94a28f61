// SPDX-License-Identifier: Apache-2.0
// Every number the CLI reads is decimal (greenctx/plan/decimal.hpp, and cli::decimal for
// options): digits only, leading zeros read as decimal, everything else refused with a reason.
// CLI11 alone would read "016" as octal and "0x10" as hexadecimal.
#include "common/cli_common.hpp"
#include <greenctx/plan/decimal.hpp>
#include "text_checks.hpp"

#include <CLI/CLI.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace greenctx::cli {
namespace {

using greenctx_test::contains;

TEST(Decimal, ReadsDigitsOnly) {
  EXPECT_EQ(read_decimal("16"), 16u);
  EXPECT_EQ(read_decimal("016"), 16u); // never octal
  EXPECT_EQ(read_decimal("0"), 0u);
  EXPECT_EQ(read_decimal("000"), 0u);
  EXPECT_EQ(read_decimal("18446744073709551615"), 18446744073709551615ull);
  for (const char *bad : {"", "0x10", "0X10", "-1", "+5", "1e3", "1.5", " 16", "16 ", "1 6", "0b1",
                          "0o7", "1'000", "1_000", "16\n"})
    EXPECT_FALSE(read_decimal(bad)) << "'" << bad << "'";
}

TEST(Decimal, RefusesWhatDoesNotFitTheMaximum) {
  EXPECT_FALSE(read_decimal("18446744073709551616")); // 2^64
  EXPECT_FALSE(read_decimal("99999999999999999999"));
  EXPECT_EQ(read_decimal("4096", 4096), 4096u);
  EXPECT_FALSE(read_decimal("4097", 4096));
  EXPECT_EQ(read_decimal("0", 0), 0u);
  EXPECT_FALSE(read_decimal("5", 0));
  EXPECT_EQ(read_decimal("0000000000000000000000016", 16), 16u); // zeros do not overflow
}

TEST(Decimal, ProblemsSayWhyAndWhatWorks) {
  EXPECT_EQ(decimal_problem("16", 1, 4096), "");
  EXPECT_EQ(decimal_problem("016", 1, 4096), "");
  const std::string hex = decimal_problem("0x10", 1, 4096);
  EXPECT_TRUE(contains(hex, "'0x10' is not a whole number in decimal"));
  EXPECT_TRUE(contains(hex, "digits 0-9 only"));
  EXPECT_TRUE(contains(hex, "from 1 to 4096"));
  EXPECT_TRUE(contains(decimal_problem("-1", 0, 10), "no sign"));
  EXPECT_TRUE(contains(decimal_problem("99999999999999999999", 1, 4096),
                       "'99999999999999999999' is out of range: give a whole number from 1 to "
                       "4096"));
  EXPECT_TRUE(contains(decimal_problem("0", 1, 4096), "'0' is out of range"));
  EXPECT_TRUE(contains(decimal_problem("", 1, 4096), "the value is empty"));
}

// The validator as CLI11 applies it: the value arrives as decimal, the error names the option.
struct parsed {
  unsigned value = 7;
  std::string error; ///< CLI11's message, "" when the parse succeeded
};

parsed parse(const std::string &arg, CLI::Validator v) {
  CLI::App app;
  parsed out;
  app.add_option("--sms", out.value)->transform(std::move(v));
  std::vector<std::string> args{arg, "--sms"}; // CLI11 takes them in reverse
  try {
    app.parse(args);
  } catch (const CLI::ParseError &e) {
    out.error = e.what();
  }
  return out;
}

TEST(DecimalOption, LeadingZerosAreDecimal) {
  EXPECT_EQ(parse("016", decimal(1, 4096)).value, 16u);
  EXPECT_EQ(parse("010000", decimal(1, 100000)).value, 10000u); // octal would be 4096
  EXPECT_EQ(parse("09", decimal_for<unsigned>()).value, 9u);    // no octal 9
  EXPECT_EQ(parse("0", decimal_for<unsigned>()).value, 0u);
  EXPECT_EQ(parse("4294967295", decimal_for<unsigned>()).value, 4294967295u);
}

TEST(DecimalOption, RefusesEverythingElseNamingTheOption) {
  for (const char *bad :
       {"0x10", "-1", "+5", "1e3", " 16", "16 ", "99999999999999999999", "", "4294967296", "0"}) {
    const parsed p = parse(bad, decimal(1, 4294967295u));
    EXPECT_TRUE(contains(p.error, "--sms")) << "'" << bad << "'";
    EXPECT_EQ(p.value, 7u) << "'" << bad << "' must leave the option untouched";
  }
  EXPECT_TRUE(contains(parse("0x10", decimal(1, 4096)).error, "not a whole number in decimal"));
  EXPECT_TRUE(contains(parse("4097", decimal(1, 4096)).error, "out of range"));
}

TEST(DecimalOption, HelpShowsTheRange) {
  EXPECT_EQ(decimal(1, 4096).get_description(), "in [1 - 4096]");
  EXPECT_EQ(decimal_for<unsigned>().get_description(), "");
  EXPECT_EQ(decimal_for<unsigned>(1).get_description(), "at least 1");
}

} // namespace
} // namespace greenctx::cli
