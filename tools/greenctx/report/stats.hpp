// SPDX-License-Identifier: Apache-2.0
// The library's order statistics (greenctx/measure/stats.hpp), by the names the CLI's reports use.
#pragma once

#include <greenctx/measure/stats.hpp>

namespace greenctx::cli {
using measure::percentile_sorted;
using measure::summarize;
using measure::summary;
} // namespace greenctx::cli
