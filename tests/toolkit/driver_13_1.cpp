// SPDX-License-Identifier: Apache-2.0
// A driver-API program written for CUDA 13.1, as TensorRT-LLM's and NVIDIA's green-context
// examples are: it links to cuDevSmResourceSplit and cuStreamGetDevResource by name (a 13.0
// driver lacks both symbols, so plain it does not start), splits the GPU into groups of the SM
// counts on its command line (default 16 and the rest), makes a green context of each with
// CU_GREEN_CTX_NONE, and prints what each group and a stream of each context report. Exit 0 when
// every group has at least the SMs asked.
#include <cuda.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                                \
  do {                                                                                             \
    const CUresult rc_ = (call);                                                                   \
    if (rc_ != CUDA_SUCCESS) {                                                                     \
      const char *name_ = nullptr;                                                                 \
      cuGetErrorName(rc_, &name_);                                                                 \
      std::printf("%s: %s (%d)\n", #call, name_ ? name_ : "?", static_cast<int>(rc_));             \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)

int main(int argc, char **argv) {
  std::vector<unsigned> sizes;
  for (int i = 1; i < argc; ++i)
    sizes.push_back(static_cast<unsigned>(std::strtoul(argv[i], nullptr, 10)));
  if (sizes.empty())
    sizes = {16, 0};
  CHECK(cuInit(0));
  int version = 0;
  CHECK(cuDriverGetVersion(&version));
  std::printf("driver %d\n", version);
  CUdevice dev = 0;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext primary = nullptr;
  CHECK(cuDevicePrimaryCtxRetain(&primary, dev));
  CHECK(cuCtxSetCurrent(primary));
  CUdevResource all{};
  CHECK(cuDeviceGetDevResource(dev, &all, CU_DEV_RESOURCE_TYPE_SM));
  std::vector<CU_DEV_SM_RESOURCE_GROUP_PARAMS> params(sizes.size());
  for (std::size_t i = 0; i < sizes.size(); ++i)
    params[i].smCount = sizes[i];
  std::vector<CUdevResource> groups(sizes.size());
  CUdevResource rest{};
  CHECK(cuDevSmResourceSplit(groups.data(), static_cast<unsigned>(groups.size()), &all, &rest, 0,
                             params.data()));
  int failures = 0;
  for (std::size_t i = 0; i < groups.size(); ++i) {
    CUdevResourceDesc desc = nullptr;
    CUgreenCtx green = nullptr;
    CUstream stream = nullptr;
    CUdevResource of_stream{};
    CHECK(cuDevResourceGenerateDesc(&desc, &groups[i], 1));
    CHECK(cuGreenCtxCreate(&green, desc, dev, CU_GREEN_CTX_NONE));
    CHECK(cuGreenCtxStreamCreate(&stream, green, CU_STREAM_NON_BLOCKING, 0));
    CHECK(cuStreamGetDevResource(stream, &of_stream, CU_DEV_RESOURCE_TYPE_SM));
    std::printf("group %zu: asked %u, got %u SMs (co-scheduled %u), its stream reports %u\n", i,
                sizes[i], groups[i].sm.smCount, params[i].coscheduledSmCount, of_stream.sm.smCount);
    if (groups[i].sm.smCount < sizes[i] || of_stream.sm.smCount != groups[i].sm.smCount)
      ++failures;
  }
  std::printf("remainder: %u SMs\n", rest.sm.smCount);
  return failures == 0 ? 0 : 1;
}
