// SPDX-License-Identifier: Apache-2.0
// GPU clocks read through NVML (opened at run time; read only, never set).
#pragma once

#include <greenctx/greenctx.hpp>

#include <nlohmann/json.hpp>

namespace greenctx::cli::bench {

/// SM and memory clocks now and their maxima, in MHz, or the reason they are unavailable.
nlohmann::json read_clocks(const device &dev);

} // namespace greenctx::cli::bench
