// SPDX-License-Identifier: Apache-2.0
// How the compat layer refuses and fails: exceptions inside, a cudaError_t and the thread's last
// explanation (greenctxGetLastErrorMessage, GREENCTX_LOG_FILE) at the boundary.
#pragma once

#include "greenctx/cuda_compat.h"
#include "greenctx/plan/error.hpp"

#include <cstring>
#include <string>
#include <type_traits>

namespace greenctx::compat {

/// Throws request_error(code, api, message): the compat layer's way to refuse.
[[noreturn]] void refuse(CUresult code, const char *api, const std::string &message);

/// The number a caller stored in an enum-typed field or argument. C lets any int stand there; C++
/// must not load one outside the enumeration's values as the enum (undefined behaviour, which
/// UBSan reports), so the bytes are read as the unsigned number they hold.
template <class E> unsigned raw_enum(const E &value) noexcept {
  static_assert(std::is_enum_v<E> && sizeof(E) == sizeof(unsigned));
  unsigned out;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

/// Throws CUDA_ERROR_INVALID_VALUE when `p` is null.
void require_pointer(const void *p, const char *api, const char *name);

/// Turns the exception in flight into a cudaError_t and records its explanation as the thread's
/// last error (and in GREENCTX_LOG_FILE): the one place where compat-layer failures are recorded.
cudaError_t translate_current_exception() noexcept;

/// Forgets the calling thread's last error (a compat-layer call that succeeds).
void clear_last_error() noexcept;

/// The calling thread's last recorded explanation ("" when none).
std::string last_error_message();

/// Runs `body`, turning what it throws into a cudaError_t (and the thread's last error message).
template <class F> cudaError_t guarded(F &&body) noexcept {
  try {
    clear_last_error();
    body();
    return cudaSuccess;
  } catch (...) {
    return translate_current_exception();
  }
}

} // namespace greenctx::compat
