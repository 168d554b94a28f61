// SPDX-License-Identifier: Apache-2.0
// What the fuzz targets share: the input as text, and the rule that a parser either gives a
// result or throws request_error with a message; anything else (another exception, a crash, a
// sanitizer report) ends the run as a finding.
#pragma once

#include "greenctx/plan/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace fuzz {

inline std::string_view text(const unsigned char *data, std::size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// Stops the run with `why` (libFuzzer saves the input that led here).
[[noreturn]] inline void finding(const std::string &why) {
  std::fprintf(stderr, "fuzz finding: %s\n", why.c_str());
  std::abort();
}

/// Calls `parse()`; returns whether it gave a result. A request_error must carry a message that
/// is not empty and names the call; any other exception is a finding.
template <class F> bool parses(F &&parse) {
  try {
    parse();
    return true;
  } catch (const greenctx::request_error &e) {
    if (std::string_view(e.what()).empty() || e.api().empty())
      finding("a request_error without a message or an api");
    return false;
  } catch (const std::exception &e) {
    finding(std::string("an exception other than request_error: ") + e.what());
  }
}

} // namespace fuzz
