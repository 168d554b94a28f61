// SPDX-License-Identifier: Apache-2.0
#include "greenctx/measure/gemm.hpp"

#include "greenctx/core/current_context.hpp"
#include "greenctx/driver/driver.hpp"
#include "greenctx/plan/error.hpp"

#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace greenctx::measure {
namespace {

// The entry points used, typed from cuBLAS's own header; nothing is linked.
struct cublas_api {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  // cublasGemmEx is overloaded in C++, so its C signature is spelled out.
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                            const void *, const void *, cudaDataType, int, const void *,
                            cudaDataType, int, const void *, void *, cudaDataType, int,
                            cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  std::string loaded_from;
  std::string failure;
};

const cublas_api &api() {
  static const cublas_api loaded = [] {
    cublas_api a;
    std::vector<std::string> candidates;
    if (const char *env = std::getenv("GREENCTX_CUBLAS"); env && *env)
      candidates.emplace_back(env);
    for (const char *c :
         {"libcublas.so.13", "libcublas.so.12", "/usr/local/cuda/lib64/libcublas.so.13",
          "/usr/local/cuda/lib64/libcublas.so.12"})
      candidates.emplace_back(c);
    std::string tried;
    for (const auto &path : candidates) {
      void *lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!lib) {
        tried += (tried.empty() ? "" : ", ") + path;
        continue;
      }
      a.create = reinterpret_cast<decltype(a.create)>(dlsym(lib, "cublasCreate_v2"));
      a.destroy = reinterpret_cast<decltype(a.destroy)>(dlsym(lib, "cublasDestroy_v2"));
      a.set_stream = reinterpret_cast<decltype(a.set_stream)>(dlsym(lib, "cublasSetStream_v2"));
      a.gemm_ex = reinterpret_cast<decltype(a.gemm_ex)>(dlsym(lib, "cublasGemmEx"));
      if (a.create && a.destroy && a.set_stream && a.gemm_ex) {
        a.loaded_from = path;
        return a;
      }
      tried += (tried.empty() ? "" : ", ") + path + " (incomplete)";
    }
    a.failure = "cuBLAS could not be loaded (tried " + tried +
                "); set GREENCTX_CUBLAS to the path of libcublas.so";
    return a;
  }();
  return loaded;
}

void check(cublasStatus_t st, const char *what) {
  if (st != CUBLAS_STATUS_SUCCESS)
    throw error(CUDA_ERROR_UNKNOWN, what,
                std::string(what) + " failed: cuBLAS status " +
                    std::to_string(static_cast<int>(st)));
}

// Random bf16 values in [-1, 1): the top 16 bits of a float.
std::vector<std::uint16_t> random_bf16(std::size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<std::uint16_t> out(count);
  for (auto &v : out) {
    const float f = dist(rng);
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    v = static_cast<std::uint16_t>(bits >> 16);
  }
  return out;
}

} // namespace

bool gemm::available() {
  return api().failure.empty();
}

std::string gemm::availability() {
  const auto &a = api();
  return a.failure.empty() ? "cuBLAS from " + a.loaded_from : a.failure;
}

gemm::gemm(const device &dev, unsigned n)
    : dev_(dev), n_(n), a_(dev, std::size_t{n} * n * 2), b_(dev, std::size_t{n} * n * 2),
      c_(dev, std::size_t{n} * n * 2) {
  const auto &a = api();
  if (!a.failure.empty())
    throw unsupported_error(a.failure, 0, query_driver().version);
  const auto values = random_bf16(std::size_t{n} * n, n);
  a_.copy_from_host(values.data(), values.size() * 2);
  const auto more = random_bf16(std::size_t{n} * n, n + 1);
  b_.copy_from_host(more.data(), more.size() * 2);
  // cuBLAS takes its device from the current context: make the primary context current for the
  // calls that need it (greenctx itself never does).
  scoped_current_context current(dev_.primary_context());
  cublasHandle_t h = nullptr;
  check(a.create(&h), "cublasCreate");
  handle_ = h;
}

gemm::~gemm() {
  if (!handle_)
    return;
  try {
    scoped_current_context current(dev_.primary_context());
    api().destroy(static_cast<cublasHandle_t>(handle_));
  } catch (...) {
  }
}

void gemm::launch(stream_ref s) {
  const auto &a = api();
  scoped_current_context current(dev_.primary_context());
  auto h = static_cast<cublasHandle_t>(handle_);
  check(a.set_stream(h, s.native_handle()), "cublasSetStream");
  const float alpha = 1.0f, beta = 0.0f;
  const int n = static_cast<int>(n_);
  check(a.gemm_ex(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, reinterpret_cast<void *>(a_.get()),
                  CUDA_R_16BF, n, reinterpret_cast<void *>(b_.get()), CUDA_R_16BF, n, &beta,
                  reinterpret_cast<void *>(c_.get()), CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                  CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
}

} // namespace greenctx::measure
