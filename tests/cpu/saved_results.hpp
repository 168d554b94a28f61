// The results saved under bench/results/, for the tests that read them back. GREENCTX_SOURCE_DIR
// in the environment overrides the build-time path (binaries copied elsewhere).
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

/// The JSON file `path` under bench/results/ (a test failure when it cannot be read).
inline nlohmann::json saved_result(const std::string &path) {
  std::ifstream f(source_dir() + "/bench/results/" + path);
  EXPECT_TRUE(f) << path;
  return nlohmann::json::parse(f);
}

} // namespace greenctx_test
