// SPDX-License-Identifier: Apache-2.0
// The records under tests/data/ (real runs, tests/data/README.md), for the tests that read them
// back. GREENCTX_SOURCE_DIR in the environment overrides the build-time path (binaries copied
// elsewhere).
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

namespace greenctx_test {

/// The source tree the tests were built from.
inline std::string source_dir() {
  const char *given = std::getenv("GREENCTX_SOURCE_DIR");
  return given && *given ? given : GREENCTX_SOURCE_DIR;
}

/// The path of `name` under tests/data/.
inline std::string data_path(const std::string &name) {
  return source_dir() + "/tests/data/" + name;
}

/// The record `name` under tests/data/, in its order (a test failure when it cannot be read).
inline nlohmann::ordered_json saved_record(const std::string &name) {
  std::ifstream f(data_path(name));
  EXPECT_TRUE(f) << name;
  return nlohmann::ordered_json::parse(f);
}

} // namespace greenctx_test
