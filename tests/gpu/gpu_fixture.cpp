// SPDX-License-Identifier: Apache-2.0
#include "gpu_fixture.hpp"

#include <dlfcn.h>

namespace greenctx::test {

CUcontext current_context() {
  // Deliberately not through greenctx: the check must not trust the code under test.
  static auto get = [] {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    return lib ? reinterpret_cast<CUresult (*)(CUcontext *)>(dlsym(lib, "cuCtxGetCurrent"))
               : nullptr;
  }();
  CUcontext ctx = nullptr;
  if (get)
    get(&ctx);
  return ctx;
}

void gpu_test::SetUp() {
  try {
    query_driver();
    if (device::count() == 0)
      GTEST_SKIP() << "no GPU: the driver sees no device";
  } catch (const error &e) {
    GTEST_SKIP() << "no GPU: " << e.what();
  }
  context_before_ = current_context();
  device_.emplace(0);
}

void gpu_test::TearDown() {
  if (!device_)
    return;
  device_.reset();
  EXPECT_EQ(current_context(), context_before_) << "the test changed the thread's current context";
}

} // namespace greenctx::test
