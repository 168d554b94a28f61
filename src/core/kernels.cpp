// SPDX-License-Identifier: Apache-2.0
#include "core/kernels.hpp"

#include "driver/driver_api.hpp"

#include <cstddef>

namespace greenctx::detail {

extern const unsigned char greenctx_kernels_fatbin[];
extern const std::size_t greenctx_kernels_fatbin_size;

namespace {

struct kernel_library {
  CUkernel probe = nullptr;
  CUkernel spin = nullptr;
  CUkernel timed_spin = nullptr;
  CUkernel timed_work = nullptr;
  CUkernel stream_copy = nullptr;
  CUkernel hold = nullptr;

  kernel_library() {
    // Loaded once and kept for the life of the process. cuLibraryLoadData is context-independent:
    // each context loads the code on its first launch there.
    CUlibrary lib = nullptr;
    GREENCTX_CALL(cuLibraryLoadData, &lib, greenctx_kernels_fatbin, nullptr, nullptr, 0, nullptr,
                  nullptr, 0);
    GREENCTX_CALL(cuLibraryGetKernel, &probe, lib, "greenctx_probe");
    GREENCTX_CALL(cuLibraryGetKernel, &spin, lib, "greenctx_spin");
    GREENCTX_CALL(cuLibraryGetKernel, &timed_spin, lib, "greenctx_timed_spin");
    GREENCTX_CALL(cuLibraryGetKernel, &timed_work, lib, "greenctx_timed_work");
    GREENCTX_CALL(cuLibraryGetKernel, &stream_copy, lib, "greenctx_stream_copy");
    GREENCTX_CALL(cuLibraryGetKernel, &hold, lib, "greenctx_hold");
  }
};

} // namespace

CUkernel kernel(kernel_id id) {
  static const kernel_library lib;
  switch (id) {
  case kernel_id::probe:
    return lib.probe;
  case kernel_id::spin:
    return lib.spin;
  case kernel_id::timed_spin:
    return lib.timed_spin;
  case kernel_id::timed_work:
    return lib.timed_work;
  case kernel_id::stream_copy:
    return lib.stream_copy;
  case kernel_id::hold:
    return lib.hold;
  }
  return nullptr;
}

void launch(kernel_id id, CUstream stream, unsigned grid, unsigned block, void **args) {
  // A CUkernel cast to CUfunction launches in the stream's context (documented for cuLaunchKernel).
  GREENCTX_CALL(cuLaunchKernel, reinterpret_cast<CUfunction>(kernel(id)), grid, 1, 1, block, 1, 1,
                0, stream, args, nullptr);
}

} // namespace greenctx::detail
