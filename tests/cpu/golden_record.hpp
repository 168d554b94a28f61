// SPDX-License-Identifier: Apache-2.0
// A record builder's whole output, byte for byte: the JSON of a record built from a test's
// synthetic results against tests/data/golden/builders/NAME.json, so that a change to a builder
// that alters any field, label, unit, digit, note or figure fails, not only what the tests assert
// one by one. With GREENCTX_UPDATE_GOLDEN=1 in the environment it writes the file instead: for a
// change that is meant, then read the diff. (tests/cpu/check_from_golden.py guards the renderers
// the same way.)
#pragma once

#include "report/record.hpp"
#include "saved_results.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace greenctx_test {

inline void expect_golden_record(const greenctx::cli::report::record &r, const std::string &name) {
  const std::string path = data_path("golden/builders/" + name + ".json");
  const std::string now = greenctx::cli::report::to_json(r).dump(2) + "\n";
  if (const char *update = std::getenv("GREENCTX_UPDATE_GOLDEN");
      update && std::string(update) == "1") {
    std::ofstream(path) << now;
    return;
  }
  std::ifstream f(path);
  ASSERT_TRUE(f) << path << " is missing: GREENCTX_UPDATE_GOLDEN=1 writes it";
  std::stringstream saved;
  saved << f.rdbuf();
  if (now == saved.str())
    return;
  // The first line that differs, not two whole records (a bench record is 100 kB).
  std::istringstream a(now), b(saved.str());
  std::string line_now, line_saved;
  int line = 0;
  while (true) {
    const bool more_now = static_cast<bool>(std::getline(a, line_now));
    const bool more_saved = static_cast<bool>(std::getline(b, line_saved));
    ++line;
    if (!more_now || !more_saved || line_now != line_saved) {
      ADD_FAILURE() << name << ": the record is not " << path << " from line " << line
                    << ":\n  built: " << (more_now ? line_now : "(its end)")
                    << "\n  saved: " << (more_saved ? line_saved : "(its end)")
                    << "\n(GREENCTX_UPDATE_GOLDEN=1 rewrites it where the change is meant)";
      return;
    }
  }
}

} // namespace greenctx_test
