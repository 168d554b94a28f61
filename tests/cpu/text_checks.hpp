// SPDX-License-Identifier: Apache-2.0
// Small assertions on messages, shared by the CPU tests.
#pragma once

#include <greenctx/plan/error.hpp>

#include <gtest/gtest.h>

#include <cctype>
#include <functional>
#include <string>
#include <string_view>

namespace greenctx_test {

/// Passes when `text` contains `needle`; on failure prints both.
inline testing::AssertionResult contains(std::string_view text, std::string_view needle) {
  if (text.find(needle) != std::string_view::npos)
    return testing::AssertionSuccess();
  return testing::AssertionFailure() << "expected \"" << needle << "\" in: \"" << text << "\"";
}

/// Passes when `text` contains the number `n` as a whole number: "16" is in "rounded up to 16"
/// but not in "116" or "160".
inline testing::AssertionResult mentions_number(std::string_view text, unsigned long long n) {
  const std::string digits = std::to_string(n);
  const auto is_digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  for (std::size_t at = text.find(digits); at != std::string_view::npos;
       at = text.find(digits, at + 1)) {
    const bool digit_before = at > 0 && is_digit(text[at - 1]);
    const std::size_t end = at + digits.size();
    const bool digit_after = end < text.size() && is_digit(text[end]);
    if (!digit_before && !digit_after)
      return testing::AssertionSuccess();
  }
  return testing::AssertionFailure() << "expected the number " << n << " in: \"" << text << "\"";
}

/// The message of the request_error (CUDA_ERROR_INVALID_VALUE) that `f` throws; "" and a test
/// failure when it throws none.
inline std::string rejection(const std::function<void()> &f) {
  try {
    f();
  } catch (const greenctx::request_error &e) {
    EXPECT_EQ(e.code(), CUDA_ERROR_INVALID_VALUE);
    return e.what();
  }
  ADD_FAILURE() << "no request_error";
  return {};
}

} // namespace greenctx_test
