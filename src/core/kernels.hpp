// SPDX-License-Identifier: Apache-2.0
// greenctx's own kernels, loaded once per process from the embedded fatbin.
#pragma once

#include <cuda.h>

#include <optional>
#include <string_view>

namespace greenctx::detail {

enum class kernel_id { probe, spin, timed_spin, timed_work, stream_copy, hold, bandwidth };

/// The context-independent kernel handle (cuLibraryGetKernel); loads the library on first use.
CUkernel kernel(kernel_id id);

/// The kernel named `name` in the fatbin ("greenctx_spin"), or nullopt.
std::optional<kernel_id> kernel_named(std::string_view name);

/// Launches a kernel on `stream` (the stream's context decides where it runs). Throws error.
void launch(kernel_id id, CUstream stream, unsigned grid, unsigned block, void **args);

} // namespace greenctx::detail
