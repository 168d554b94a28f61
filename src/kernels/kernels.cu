// Kernels greenctx launches itself: the SM probe and spin kernels for verify, demo and the tests.
// Built into a fatbin (sm_90 + PTX) and loaded with cuLibraryLoadData, so the library needs no
// CUDA runtime. Keep them small: one short translation unit.
#include <cstdint>

namespace {
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned sm_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
__device__ __forceinline__ void spin_for(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}
} // namespace

// Each block writes the SM it ran on to smids[blockIdx.x], then keeps its SM busy for spin_ns so
// that later blocks spread over all SMs the context allows.
extern "C" __global__ void greenctx_probe(unsigned *smids, unsigned long long spin_ns) {
  if (threadIdx.x == 0) smids[blockIdx.x] = sm_id();
  spin_for(spin_ns);
}

// Each block keeps its SM busy for spin_ns nanoseconds (the guide's long and critical kernels).
extern "C" __global__ void greenctx_spin(unsigned long long spin_ns) { spin_for(spin_ns); }
