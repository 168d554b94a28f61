// SPDX-License-Identifier: Apache-2.0
// Kernels greenctx launches itself: the SM probe, the spin kernels of verify, demo and the tests,
// the memory kernels of the background and the bandwidth curve, and the one the split's cluster
// proofs hand to the occupancy calculator.
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
  if (threadIdx.x == 0)
    smids[blockIdx.x] = sm_id();
  spin_for(spin_ns);
}

// Each block keeps its SM busy for spin_ns nanoseconds (the guide's long and critical kernels).
extern "C" __global__ void greenctx_spin(unsigned long long spin_ns) {
  spin_for(spin_ns);
}

// Like greenctx_spin, recording each block's start and end (%globaltimer, ns) in
// stamps[2 * block] and stamps[2 * block + 1]: the benchmark's critical kernel.
extern "C" __global__ void greenctx_timed_spin(unsigned long long spin_ns,
                                               unsigned long long *stamps) {
  const unsigned long long start = global_ns();
  spin_for(spin_ns);
  __syncthreads();
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = start;
    stamps[2 * blockIdx.x + 1] = global_ns();
  }
}

// Each thread runs `iterations` dependent multiply-adds (work, not time: a block that loses its SM
// for a while, to another process's time slice or to other blocks on the same SM, ends later),
// and each block records its start and end like greenctx_timed_spin.
extern "C" __global__ void greenctx_timed_work(unsigned long long iterations,
                                               unsigned long long *stamps) {
  const unsigned long long start = global_ns();
  float x = 1.0f + 1e-3f * static_cast<float>(threadIdx.x);
  for (unsigned long long i = 0; i < iterations; ++i)
    x = fmaf(x, 0.999999f, 1e-6f);
  __syncthreads();
  if (threadIdx.x == 0) {
    stamps[2 * blockIdx.x] = start;
    stamps[2 * blockIdx.x + 1] = global_ns();
  }
  if (x == -1.0f) // never: keeps the loop
    stamps[0] = 0;
}

// Each block copies its own chunk of `chunk` 16-byte words from in to out: a memory-bound
// workload whose blocks are units of work, so it spreads over whatever SMs it is given.
extern "C" __global__ void greenctx_stream_copy(const uint4 *in, uint4 *out,
                                                unsigned long long chunk) {
  const unsigned long long base = chunk * blockIdx.x;
  for (unsigned long long i = threadIdx.x; i < chunk; i += blockDim.x)
    out[base + i] = in[base + i];
}

// Streams `passes` times over `words` 16-byte words in a grid-stride loop: op 0 reads a (an XOR of
// every word, stored only when it equals a value of the thread's own, practically never, so that
// the compiler keeps the reads), op 1 writes b, op 2 copies a to b. The memory bandwidth of
// whatever SMs it is given.
extern "C" __global__ void greenctx_bandwidth(const uint4 *a, uint4 *b, unsigned long long words,
                                              unsigned op, unsigned passes, unsigned *sink) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long first =
      static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  unsigned acc = 0;
  for (unsigned p = 0; p < passes; ++p)
    for (unsigned long long i = first; i < words; i += stride) {
      if (op == 0) {
        const uint4 v = a[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
      } else if (op == 1) {
        b[i] = make_uint4(static_cast<unsigned>(i), p, 0, 0);
      } else {
        b[i] = a[i];
      }
    }
  if (acc == 0x9e3779b9u + first)
    sink[0] = acc;
}

// One thread waits until the host has set words[0] to `ticket` or later (page-locked host
// memory mapped for the device), or `timeout_ns` has passed; on a timeout it writes `ticket` to
// words[1]. Work queued behind it on the same stream starts only once the host has released it:
// what the host enqueued in between starts at once, however long enqueuing it took.
extern "C" __global__ void greenctx_hold(unsigned *words, unsigned ticket,
                                         unsigned long long timeout_ns) {
  const unsigned long long start = global_ns();
  for (;;) {
    unsigned seen;
    asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(seen) : "l"(words) : "memory");
    if (static_cast<int>(seen - ticket) >= 0)
      return;
    if (global_ns() - start >= timeout_ns)
      break;
  }
  asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(words + 1), "r"(ticket) : "memory");
}
