// SPDX-License-Identifier: Apache-2.0
#include "core/kernels.hpp"

#include "driver/driver_api.hpp"

#include <array>
#include <cstddef>
#include <iterator>

namespace greenctx::detail {

extern const unsigned char greenctx_kernels_fatbin[];
extern const std::size_t greenctx_kernels_fatbin_size;

namespace {

// Each kernel's name in the fatbin, in the order of kernel_id.
constexpr const char *kernel_names[] = {
    "greenctx_probe",       "greenctx_spin", "greenctx_timed_spin", "greenctx_timed_work",
    "greenctx_stream_copy", "greenctx_hold", "greenctx_bandwidth"};
constexpr std::size_t kernel_count = std::size(kernel_names);
static_assert(kernel_count == static_cast<std::size_t>(kernel_id::bandwidth) + 1);

struct kernel_library {
  std::array<CUkernel, kernel_count> kernels{};

  kernel_library() {
    // Loaded once and kept for the life of the process. cuLibraryLoadData is context-independent:
    // each context loads the code on its first launch there.
    CUlibrary lib = nullptr;
    GREENCTX_CALL(cuLibraryLoadData, &lib, greenctx_kernels_fatbin, nullptr, nullptr, 0, nullptr,
                  nullptr, 0);
    for (std::size_t i = 0; i < kernel_count; ++i)
      GREENCTX_CALL(cuLibraryGetKernel, &kernels[i], lib, kernel_names[i]);
  }
};

} // namespace

CUkernel kernel(kernel_id id) {
  static const kernel_library lib;
  return lib.kernels.at(static_cast<std::size_t>(id));
}

std::optional<kernel_id> kernel_named(std::string_view name) {
  for (std::size_t i = 0; i < kernel_count; ++i)
    if (name == kernel_names[i])
      return static_cast<kernel_id>(i);
  return std::nullopt;
}

void launch(kernel_id id, CUstream stream, unsigned grid, unsigned block, void **args) {
  // A CUkernel cast to CUfunction launches in the stream's context (documented for cuLaunchKernel).
  GREENCTX_CALL(cuLaunchKernel, reinterpret_cast<CUfunction>(kernel(id)), grid, 1, 1, block, 1, 1,
                0, stream, args, nullptr);
}

} // namespace greenctx::detail
