// SPDX-License-Identifier: Apache-2.0
// Kernels the CUDA test programs share: where a block ran, as the hardware reports it.
#pragma once

namespace greenctx_test {

/// %globaltimer, in ns.
__device__ inline unsigned long long now_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Each block records its SM (%smid) in smids[blockIdx.x], then keeps the SM busy for spin_ns so
/// that later blocks spread over every SM the stream's context allows. Static: each translation
/// unit of a program gets its own (a test executable has several .cu files that include this).
static __global__ void record_smid(unsigned *smids, unsigned long long spin_ns) {
  if (threadIdx.x == 0) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    smids[blockIdx.x] = id;
  }
  const unsigned long long start = now_ns();
  while (now_ns() - start < spin_ns) {
  }
}

/// One block spins for spin_ns; its first thread then writes the block's start and end times (ns)
/// to times[0..1]. Static, as above.
static __global__ void timed_spin(unsigned long long *times, unsigned long long spin_ns) {
  const unsigned long long start = now_ns();
  while (now_ns() - start < spin_ns) {
  }
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    times[0] = start;
    times[1] = now_ns();
  }
}

} // namespace greenctx_test
