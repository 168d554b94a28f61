// SPDX-License-Identifier: Apache-2.0
// device.hpp: CUDA_DEVICE_MAX_CONNECTIONS as the driver will read it from the environment.
#include "greenctx/core/device.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace {

constexpr const char *variable = "CUDA_DEVICE_MAX_CONNECTIONS";

// Saves CUDA_DEVICE_MAX_CONNECTIONS before each test and puts it back (or unsets it) after, so the
// tests neither see nor leave behind a value of their own.
class MaxConnectionsEnvironment : public testing::Test {
protected:
  void SetUp() override {
    if (const char *v = std::getenv(variable))
      saved_ = std::string(v);
  }
  void TearDown() override {
    if (saved_)
      ::setenv(variable, saved_->c_str(), 1);
    else
      ::unsetenv(variable);
  }

  static std::optional<int> with(const char *value) {
    EXPECT_EQ(::setenv(variable, value, 1), 0);
    return greenctx::max_connections_from_environment();
  }

private:
  std::optional<std::string> saved_;
};

TEST_F(MaxConnectionsEnvironment, UnsetIsNullopt) {
  ASSERT_EQ(::unsetenv(variable), 0);
  ASSERT_EQ(std::getenv(variable), nullptr);
  EXPECT_EQ(greenctx::max_connections_from_environment(), std::nullopt);
}

TEST_F(MaxConnectionsEnvironment, WholeNumbersAreReadAsSet) {
  EXPECT_EQ(with("4"), std::optional<int>(4));
  EXPECT_EQ(with("32"), std::optional<int>(32));
  EXPECT_EQ(with("1"), std::optional<int>(1));
}

TEST_F(MaxConnectionsEnvironment, EmptyIsNullopt) {
  EXPECT_EQ(with(""), std::nullopt);
}

TEST_F(MaxConnectionsEnvironment, NotANumberIsNullopt) {
  EXPECT_EQ(with("abc"), std::nullopt);
}

TEST_F(MaxConnectionsEnvironment, TrailingCharactersAreNullopt) {
  EXPECT_EQ(with("4x"), std::nullopt);
  EXPECT_EQ(with("32 "), std::nullopt);
}

TEST_F(MaxConnectionsEnvironment, LeadingCharactersAreNullopt) {
  EXPECT_EQ(with("x4"), std::nullopt);
  EXPECT_EQ(with(" 4"), std::nullopt);
}

TEST_F(MaxConnectionsEnvironment, OutsideTheDocumentedRangeIsNullopt) {
  EXPECT_EQ(with("0"), std::nullopt);
  EXPECT_EQ(with("-4"), std::nullopt);
  EXPECT_EQ(with("33"), std::nullopt);
}

TEST_F(MaxConnectionsEnvironment, TooLargeForAnIntIsNullopt) {
  EXPECT_EQ(with("99999999999"), std::nullopt);
}

TEST_F(MaxConnectionsEnvironment, ReadsTheCurrentValueEachCall) {
  EXPECT_EQ(with("4"), std::optional<int>(4));
  EXPECT_EQ(with("abc"), std::nullopt);
  EXPECT_EQ(with("16"), std::optional<int>(16));
  ASSERT_EQ(::unsetenv(variable), 0);
  EXPECT_EQ(greenctx::max_connections_from_environment(), std::nullopt);
}

TEST_F(MaxConnectionsEnvironment, OneConnectionIsWarnedAboutAndOthersAreNot) {
  with("1");
  const auto warning = greenctx::max_connections_warning();
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("CUDA_DEVICE_MAX_CONNECTIONS=1"), std::string::npos) << *warning;
  EXPECT_NE(warning->find("isolate nothing"), std::string::npos) << *warning;
  for (const char *value : {"2", "8", "32", "abc"}) {
    with(value);
    EXPECT_EQ(greenctx::max_connections_warning(), std::nullopt) << value;
  }
  ASSERT_EQ(::unsetenv(variable), 0);
  EXPECT_EQ(greenctx::max_connections_warning(), std::nullopt);
}

} // namespace
