// SPDX-License-Identifier: Apache-2.0
// Does cuBLASLt fail on cudaStreamPerThread when it sizes a GEMM for fewer SMs than the device
// has, without greenctx? A diagnosis for the open defect of docs/run-design.md (cuBLAS on the
// per-thread stream, told fewer SMs, fails with CUBLAS_STATUS_INTERNAL_ERROR under greenctx run).
// An SGEMM 1024^3 through cublasLtMatmul with CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET on each kind of
// stream; prints one line per (stream, target): the status and a checksum. Knows nothing of
// greenctx.
//
//   cublaslt_sm_target [TARGET...]      (default: 0 (the device's), 64, 16)
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

__global__ void fill(float *x, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    x[i] = static_cast<float>(((i * 2654435761u + seed) >> 7) % 5) - 2.0f;
}

// One SGEMM on `stream` sized for `target` SMs (0: cuBLASLt's default); its status, and the sum of
// the result (exact: integers) through *sum.
cublasStatus_t gemm(cublasLtHandle_t lt, cudaStream_t stream, int target, const float *a,
                    const float *b, float *c, void *workspace, size_t workspace_bytes, int n,
                    double *sum) {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t la = nullptr;
  cublasStatus_t st = cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  if (st == CUBLAS_STATUS_SUCCESS && target > 0)
    st = cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_SM_COUNT_TARGET, &target,
                                        sizeof target);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, n, n, n);
  cublasLtMatmulPreference_t pref = nullptr;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulPreferenceCreate(&pref);
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                              &workspace_bytes, sizeof workspace_bytes);
  cublasLtMatmulHeuristicResult_t h{};
  int found = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmulAlgoGetHeuristic(lt, op, la, la, la, la, pref, 1, &h, &found);
  if (st == CUBLAS_STATUS_SUCCESS && found == 0)
    st = CUBLAS_STATUS_NOT_SUPPORTED;
  const float one = 1, zero = 0;
  if (st == CUBLAS_STATUS_SUCCESS)
    st = cublasLtMatmul(lt, op, &one, a, la, b, la, &zero, c, la, c, la, &h.algo, workspace,
                        workspace_bytes, stream);
  if (st == CUBLAS_STATUS_SUCCESS) {
    std::vector<float> back(size_t(n) * n);
    if (cudaMemcpyAsync(back.data(), c, back.size() * sizeof(float), cudaMemcpyDeviceToHost,
                        stream) != cudaSuccess ||
        cudaStreamSynchronize(stream) != cudaSuccess)
      st = CUBLAS_STATUS_EXECUTION_FAILED;
    *sum = 0;
    for (float x : back)
      *sum += x;
  }
  if (pref)
    cublasLtMatmulPreferenceDestroy(pref);
  if (la)
    cublasLtMatrixLayoutDestroy(la);
  if (op)
    cublasLtMatmulDescDestroy(op);
  return st;
}

} // namespace

int main(int argc, char **argv) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "cublaslt_sm_target: no CUDA device: skipped\n");
    return 77;
  }
  std::vector<int> targets;
  for (int i = 1; i < argc; ++i)
    targets.push_back(std::atoi(argv[i]));
  if (targets.empty())
    targets = {0, 64, 16};
  constexpr int n = 1024;
  const size_t bytes = size_t(n) * n * sizeof(float), workspace_bytes = 32u << 20;
  float *a = nullptr, *b = nullptr, *c = nullptr;
  void *workspace = nullptr;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
      cudaMalloc(&c, bytes) != cudaSuccess ||
      cudaMalloc(&workspace, workspace_bytes) != cudaSuccess) {
    std::fprintf(stderr, "cublaslt_sm_target: cudaMalloc failed\n");
    return 3;
  }
  fill<<<256, 256>>>(a, size_t(n) * n, 1);
  fill<<<256, 256>>>(b, size_t(n) * n, 2);
  cudaDeviceSynchronize();
  cublasLtHandle_t lt = nullptr;
  if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS)
    return 3;
  cudaStream_t created = nullptr, non_blocking = nullptr;
  cudaStreamCreate(&created);
  cudaStreamCreateWithFlags(&non_blocking, cudaStreamNonBlocking);
  const struct {
    const char *name;
    cudaStream_t s;
  } streams[] = {{"legacy", nullptr},
                 {"blocking", created},
                 {"non-blocking", non_blocking},
                 {"cudaStreamPerThread", cudaStreamPerThread}};
  int failures = 0;
  for (int target : targets)
    for (const auto &s : streams) {
      double sum = 0;
      const cublasStatus_t st = gemm(lt, s.s, target, a, b, c, workspace, workspace_bytes, n, &sum);
      failures += st != CUBLAS_STATUS_SUCCESS;
      std::printf("sm target %d, %s: %s", target, s.name, cublasLtGetStatusName(st));
      if (st == CUBLAS_STATUS_SUCCESS)
        std::printf(", sum %.0f", sum);
      std::printf("\n");
    }
  cublasLtDestroy(lt);
  return failures ? 1 : 0;
}
