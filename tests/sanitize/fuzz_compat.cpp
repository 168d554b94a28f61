// SPDX-License-Identifier: Apache-2.0
// The compat layer's argument checks over no driver (the process is pointed at a libcuda that does
// not exist): the input is a sequence of calls with arbitrary arguments (resources of random bytes,
// group parameter arrays, counts, flags, device ordinals, and handles that are null, forged or
// made of random bits). Without a driver nothing can be made, so each call must fail with an
// error code and a message that says why, hand out no handle, and never crash or touch memory it
// was not given (ASan, UBSan).
#include "fuzz_compat_input.hpp"
#include "fuzz_common.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace {

using fuzz::input;
using fuzz::most;

// Every call's result: an error, a message, and the handle it was given to fill still null.
void failed(cudaError_t rc, const char *call, const void *handed_out = nullptr) {
  if (rc == cudaSuccess)
    fuzz::finding(std::string(call) + " succeeded without a driver");
  if (std::strlen(greenctxGetLastErrorMessage()) == 0)
    fuzz::finding(std::string(call) + " failed (" + std::to_string(rc) + ") without a message");
  if (handed_out)
    fuzz::finding(std::string(call) + " failed but handed out a handle");
}

void one_call(input &in) {
  cudaDevResource resources[most], out[most], rest;
  cudaDevSmResourceGroupParams params[most];
  switch (in.value<unsigned char>() % 12) {
  case 0: { // split by count: nbGroups in and out; result holds as many as it says, or is null
    in.fill(resources, 1);
    unsigned groups = in.value<unsigned>();
    const bool with_result = groups <= most && in.flip();
    const cudaError_t rc = cudaDevSmResourceSplitByCount(
        with_result ? out : nullptr, in.flip() ? &groups : nullptr, in.flip() ? resources : nullptr,
        in.flip() ? &rest : nullptr, in.value<unsigned>(), in.value<unsigned>());
    failed(rc, "cudaDevSmResourceSplitByCount");
    break;
  }
  case 1: { // the 13.1 split: nbGroups result and parameter entries, or null arrays
    in.fill(resources, 1);
    const unsigned groups = in.flip() ? in.value<unsigned>() : in.value<unsigned>() % (most + 1);
    const bool arrays = groups <= most;
    in.fill(params, arrays ? groups : 0);
    const cudaError_t rc = cudaDevSmResourceSplit(
        arrays && in.flip() ? out : nullptr, groups, in.flip() ? resources : nullptr,
        in.flip() ? &rest : nullptr, in.value<unsigned>(), arrays && in.flip() ? params : nullptr);
    failed(rc, "cudaDevSmResourceSplit");
    break;
  }
  case 2: { // a descriptor of forged resources
    const unsigned n = in.value<unsigned>() % (most + 1);
    in.fill(resources, n);
    cudaDevResourceDesc_t desc = nullptr;
    const bool given = in.flip();
    const cudaError_t rc =
        cudaDevResourceGenerateDesc(in.flip() ? &desc : nullptr, given ? resources : nullptr, n);
    // One that holds only a work-queue resource needs no driver yet (the device's SMs are taken
    // when a context is made of it): that may succeed, and must give a descriptor.
    if (rc == cudaSuccess && given && n > 0 && desc &&
        std::all_of(resources, resources + n, [](const cudaDevResource &r) {
          unsigned type; // read as a number: random bytes need not be a value of the enum
          std::memcpy(&type, &r.type, sizeof type);
          return type == cudaDevResourceTypeWorkqueueConfig || type == cudaDevResourceTypeWorkqueue;
        }))
      break;
    failed(rc, "cudaDevResourceGenerateDesc", desc);
    break;
  }
  case 3: {
    cudaExecutionContext_t ctx = nullptr;
    const cudaError_t rc =
        cudaGreenCtxCreate(in.flip() ? &ctx : nullptr, in.handle<cudaDevResourceDesc_t>(),
                           in.value<int>(), in.value<unsigned>());
    failed(rc, "cudaGreenCtxCreate", ctx);
    break;
  }
  case 4:
    failed(cudaExecutionCtxDestroy(in.handle<cudaExecutionContext_t>()), "cudaExecutionCtxDestroy");
    break;
  case 5: {
    cudaStream_t s = nullptr;
    const cudaError_t rc =
        cudaExecutionCtxStreamCreate(in.flip() ? &s : nullptr, in.handle<cudaExecutionContext_t>(),
                                     in.value<unsigned>(), in.value<int>());
    failed(rc, "cudaExecutionCtxStreamCreate", s);
    break;
  }
  case 6: {
    const auto ctx = in.handle<cudaExecutionContext_t>();
    int device = 0;
    unsigned long long id = 0;
    failed(cudaExecutionCtxSynchronize(ctx), "cudaExecutionCtxSynchronize");
    failed(cudaExecutionCtxGetDevice(in.flip() ? &device : nullptr, ctx),
           "cudaExecutionCtxGetDevice");
    failed(cudaExecutionCtxGetId(ctx, in.flip() ? &id : nullptr), "cudaExecutionCtxGetId");
    failed(cudaExecutionCtxRecordEvent(ctx, in.handle<cudaEvent_t>()),
           "cudaExecutionCtxRecordEvent");
    failed(cudaExecutionCtxWaitEvent(ctx, in.handle<cudaEvent_t>()), "cudaExecutionCtxWaitEvent");
    break;
  }
  case 7: {
    cudaExecutionContext_t ctx = nullptr;
    const cudaError_t rc = cudaDeviceGetExecutionCtx(in.flip() ? &ctx : nullptr, in.value<int>());
    failed(rc, "cudaDeviceGetExecutionCtx", ctx);
    break;
  }
  case 8: {
    const int type = in.value<int>();
    failed(fuzz_device_get_dev_resource(in.value<int>(), in.flip() ? out : nullptr, type),
           "cudaDeviceGetDevResource");
    failed(fuzz_ctx_get_dev_resource(in.handle<cudaExecutionContext_t>(), in.flip() ? out : nullptr,
                                     type),
           "cudaExecutionCtxGetDevResource");
    break;
  }
  case 9: {
    const auto stream = in.handle<cudaStream_t>();
    if (in.flip()) {
      failed(fuzz_stream_get_dev_resource(stream, in.flip() ? out : nullptr, in.value<int>()),
             "cudaStreamGetDevResource");
    } else {
      cudaExecutionContext_t ctx = nullptr;
      const cudaError_t rc = greenctxStreamGetExecutionCtx(stream, in.flip() ? &ctx : nullptr);
      failed(rc, "greenctxStreamGetExecutionCtx", ctx);
    }
    break;
  }
  case 10: {
    cudaDevWorkqueueConfigResource config{};
    int provisioned = -1;
    failed(greenctxExecutionCtxGetWorkqueueStatus(in.handle<cudaExecutionContext_t>(),
                                                  in.flip() ? &config : nullptr,
                                                  in.flip() ? &provisioned : nullptr),
           "greenctxExecutionCtxGetWorkqueueStatus");
    break;
  }
  default: {
    cudaExecutionContext_t ctx = nullptr;
    const cudaError_t rc = greenctxGraphKernelNodeGetExecutionCtx(in.handle<cudaGraphNode_t>(),
                                                                  in.flip() ? &ctx : nullptr);
    failed(rc, "greenctxGraphKernelNodeGetExecutionCtx", ctx);
    break;
  }
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // Before the library's first call: it loads the driver once per process.
  setenv("GREENCTX_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const unsigned char *data, std::size_t size) {
  input in(data, size);
  for (int calls = 0; in.more() && calls < 32; ++calls)
    one_call(in);
  return 0;
}
