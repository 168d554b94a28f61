// SPDX-License-Identifier: Apache-2.0
// How a stream is created (execution_context_ref::create_stream).
#pragma once

#include "greenctx/cxx_standard.hpp"

#include <cuda.h>

namespace greenctx {

/// Stream creation flags.
enum class stream_flags : unsigned {
  /// Default: on the primary context the stream synchronises with the legacy NULL stream; on a
  /// green context every stream is non-blocking (the driver requires it).
  none = 0,
  /// The stream does not synchronise with the legacy NULL stream.
  non_blocking = CU_STREAM_NON_BLOCKING,
};

} // namespace greenctx
