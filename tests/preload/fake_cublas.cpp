// A fake libcublas for the preload library's CPU tests: the three functions greenctx's cuBLAS
// wrapper calls through, each written to the fake driver's log (fake_cuda.cpp).
#include <cstddef>
#include <cstdint>
#include <dlfcn.h>
#include <string>

namespace {

void note(const std::string &s) {
  using note_fn = void (*)(const char *);
  if (auto f = reinterpret_cast<note_fn>(dlsym(RTLD_DEFAULT, "fake_cuda_note")))
    f(s.c_str());
}

std::string name(const void *p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  return v == 2 ? "per-thread" : "h" + std::to_string(v);
}

} // namespace

#define FAKE extern "C" __attribute__((visibility("default"))) int

FAKE cublasSetStream_v2(void *handle, void *stream) {
  note("cublas_set_stream " + name(handle) + " " + name(stream));
  return 0;
}
FAKE cublasSetWorkspace_v2(void *handle, void *, std::size_t bytes) {
  note("cublas_set_workspace " + name(handle) + " " + std::to_string(bytes));
  return 0;
}
FAKE cublasDestroy_v2(void *handle) {
  note("cublas_destroy " + name(handle));
  return 0;
}
