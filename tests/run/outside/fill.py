# SPDX-License-Identifier: Apache-2.0
"""Is a framework's work confined to the SMs the device says it has? A check that needs no SM
ids: a spin kernel (CuPy, on a non-blocking stream of its own) fills every SM the program is told
the device has, as many 1024-thread blocks as an SM holds times cudaDevAttrMultiProcessorCount,
each spinning SPIN_MS on %globaltimer (bounded by clock64 too). Once all its blocks are running,
the framework's work runs on the framework's own stream and is waited for by the framework's own
wait (never a device-wide one). No block of the work can start on a full SM, so the work must
finish after the fill; if it finishes while the fill still runs, it ran on SMs the program was
not told of (or in another context, time-sliced with the fill's): ESCAPED.

The rule holds plain and confined alike (plain, the fill covers every SM), so the program need not
know how it runs; an ESCAPED plain run means the check itself is wrong (work that launches no
kernel, say), and shows as a failed plain run. A control makes the check honest: the same fill,
but the blocks that land on SMs with an odd %smid leave at once, so that about half the SMs are
wholly free: there the same work must finish first, else it cannot show an escape (it is too long,
or its host side waits for the device) and the verdict is "inconclusive". A fill that cannot have
all its blocks running at once means the device has fewer SMs than it says: FAILED.
Verdicts go to stderr only, one line "fill: NAME: ..." each.

    ok = fill.check("jax step", lambda: jax.block_until_ready(step(params, x)))
    # True: waited (confined); False: escaped or too few SMs; None: inconclusive or not checked
"""
import sys
import time

SPIN_MS = 300

_SOURCE = r"""
__device__ unsigned long long fill_now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// counts[0]: blocks started; counts[1]: blocks that left at once (release_odd: on an odd SM).
extern "C" __global__ void __launch_bounds__(THREADS, PER_SM)
fill_spin(unsigned *counts, unsigned long long spin_ns, unsigned release_odd) {
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x == 0) {
    atomicAdd(&counts[0], 1u);
    if (release_odd && (sm & 1))
      atomicAdd(&counts[1], 1u);
  }
  if (release_odd && (sm & 1))
    return;
  const unsigned long long t0 = fill_now();
  const long long c0 = clock64(), max_cycles = (long long)spin_ns * 4 + 100000;
  while (fill_now() - t0 < spin_ns && clock64() - c0 < max_cycles) {
  }
}
"""

_filler = None


class _Filler:
    def __init__(self):
        import cupy
        self.cp = cupy
        rt = cupy.cuda.runtime
        dev = cupy.cuda.Device().id
        self.sms = rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount, dev)
        per_sm_threads = rt.deviceGetAttribute(rt.cudaDevAttrMaxThreadsPerMultiProcessor, dev)
        # Blocks that together hold every thread slot of an SM: 2 x 1024 on CC 9.0.
        self.threads = next(t for t in range(1024, 31, -32) if per_sm_threads % t == 0)
        self.per_sm = per_sm_threads // self.threads
        source = _SOURCE.replace("THREADS", str(self.threads)).replace("PER_SM", str(self.per_sm))
        self.kernel = cupy.RawKernel(source, "fill_spin")
        self.stream = cupy.cuda.Stream(non_blocking=True)
        self.poll = cupy.cuda.Stream(non_blocking=True)
        self.counts = cupy.zeros(2, dtype=cupy.uint32)
        self.blocks = self.per_sm * self.sms
        self.launch(0, False)  # compiles and loads the kernel
        self.stream.synchronize()

    def launch(self, spin_ns, release_odd):
        with self.stream:
            self.counts.fill(0)
        self.stream.synchronize()  # the counters are 0 before the poll can read them
        with self.stream:  # a RawKernel runs on the current stream
            self.kernel((self.blocks,), (self.threads,),
                        (self.counts, self.cp.uint64(spin_ns), self.cp.uint32(release_odd)))

    def resident(self, timeout_s):
        """Waits until every block has started: (True, blocks that left), or (False, 0)."""
        deadline = time.monotonic() + timeout_s
        while True:
            started, left = (int(c) for c in self.counts.get(stream=self.poll))  # a copy: no SM
            if started >= self.blocks:
                return True, left
            if time.monotonic() > deadline:
                return False, 0
            time.sleep(0.0002)

    def measure(self, release_odd, run):
        """(all started, blocks that left, the work finished while the fill ran, work seconds,
        fill seconds)."""
        self.cp.cuda.runtime.deviceSynchronize()  # nothing else is running
        start = time.monotonic()
        self.launch(SPIN_MS * 1_000_000, release_odd)
        fits, left = self.resident(SPIN_MS / 3000)
        if not fits:
            self.stream.synchronize()
            return False, 0, False, 0.0, time.monotonic() - start
        work_start = time.monotonic()
        run()
        work = time.monotonic() - work_start
        early = not self.stream.done
        self.stream.synchronize()
        return True, left, early, work, time.monotonic() - start


def check(name, run):
    """Runs run() once to warm up (it must then launch kernels and wait for them on the
    framework's own stream, quickly: well under SPIN_MS on a free GPU), then beside the fill with
    the odd SMs released and beside the whole fill. Says the verdict on stderr; returns True (the
    work waited for the whole fill and finished first beside the released one), False (escaped,
    or the fill did not fit the SMs the device reports) or None (inconclusive, or CuPy missing)."""
    global _filler
    try:
        if _filler is None:
            _filler = _Filler()
    except Exception as e:  # CuPy missing or unusable
        print(f"fill: {name}: not checked: no CuPy fill ({type(e).__name__}: {e})".replace(
            "\n", " "), file=sys.stderr)
        return None
    f = _filler
    run()
    fits, left, half_early, half_work, _ = f.measure(True, run)
    fits_full, _, escaped, work, fill = f.measure(False, run)
    what = (f"{f.sms} SMs x {f.per_sm} blocks of {f.threads} threads; work {work * 1e3:.1f} ms "
            f"under the fill ({fill * 1e3:.0f} ms), {half_work * 1e3:.1f} ms with {left} blocks "
            f"released from the odd SMs")
    if not (fits and fits_full):
        print(f"fill: {name}: FAILED: the fill's {f.blocks} blocks could not all run at once: "
              f"the device has fewer SMs than the {f.sms} it reports ({what})", file=sys.stderr)
        return False
    if escaped:
        print(f"fill: {name}: ESCAPED: the work finished while the fill held every SM the device "
              f"reports: it ran on other SMs, or in a context time-sliced with the fill's "
              f"({what})", file=sys.stderr)
        return False
    if not half_early:
        print(f"fill: {name}: inconclusive: the work did not finish first with the odd SMs free "
              f"either, so it could not have shown an escape ({what})", file=sys.stderr)
        return None
    print(f"fill: {name}: work waited for the fill of all the device's SMs and finished first "
          f"with the odd SMs free ({what})", file=sys.stderr)
    return True
