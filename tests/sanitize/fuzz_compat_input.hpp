// SPDX-License-Identifier: Apache-2.0
// What the compat layer's fuzz targets share (fuzz_compat.cpp over no driver, fuzz_compat_fake.cpp
// over the tests' fake driver): the input read as call arguments, and the calls that take an enum,
// made from C (fuzz_compat_enums.c) so that they can pass any int.
#pragma once

#include <greenctx/cuda_compat.h>

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstring>
#include <vector>

extern "C" {
cudaError_t fuzz_device_get_dev_resource(int device, cudaDevResource *resource, int type);
cudaError_t fuzz_ctx_get_dev_resource(cudaExecutionContext_t ctx, cudaDevResource *resource,
                                      int type);
cudaError_t fuzz_stream_get_dev_resource(cudaStream_t stream, cudaDevResource *resource, int type);
}

namespace fuzz {

constexpr std::size_t most = 8; // arrays the input fills: resources, group parameters

/// The input as call arguments.
class input {
public:
  input(const unsigned char *data, std::size_t size) : in_(data, size) {}
  bool more() { return in_.remaining_bytes() > 0; }
  template <class T> T value() { return in_.ConsumeIntegral<T>(); }
  template <class T> T in_range(T lo, T hi) { return in_.ConsumeIntegralInRange<T>(lo, hi); }
  bool flip() { return in_.ConsumeBool(); }

  // `x` zeroed, then as many of its bytes as the input still has taken from it.
  template <class T> void bytes_into(T &x) {
    const auto bytes = in_.ConsumeBytes<unsigned char>(sizeof x);
    std::memset(&x, 0, sizeof x);
    if (!bytes.empty())
      std::memcpy(&x, bytes.data(), bytes.size());
  }
  // A resource of random bytes, its link (nextResource) null or another of these resources.
  void fill(cudaDevResource *r, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      bytes_into(r[i]);
      const auto link = in_.ConsumeIntegralInRange<std::size_t>(0, n);
      r[i].nextResource = link < n ? &r[link] : nullptr;
    }
  }
  void fill(cudaDevSmResourceGroupParams *p, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      bytes_into(p[i]);
  }
  // A handle: null, a small number, random bits, or the address of bytes the input wrote.
  template <class H> H handle() {
    switch (in_.ConsumeIntegralInRange(0, 3)) {
    case 0:
      return nullptr;
    case 1:
      return reinterpret_cast<H>(static_cast<std::uintptr_t>(in_.ConsumeIntegralInRange(1, 64)));
    case 2:
      return reinterpret_cast<H>(static_cast<std::uintptr_t>(value<std::uint64_t>() | 1));
    default:
      forged_.assign(256, 0);
      const auto bytes = in_.ConsumeBytes<unsigned char>(forged_.size());
      if (!bytes.empty())
        std::memcpy(forged_.data(), bytes.data(), bytes.size());
      return reinterpret_cast<H>(forged_.data());
    }
  }

private:
  FuzzedDataProvider in_;
  std::vector<unsigned char> forged_;
};

} // namespace fuzz
