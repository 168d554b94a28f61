# SPDX-License-Identifier: Apache-2.0
"""cuda.core, unmodified, splitting the GPU's SMs into groups of different sizes (the CUDA 13.1
structured split: SMResourceOptions(count=(112, 16)) by default), one green context and stream per
group, and a kernel on each stream recording the %smid of every block. On a 13.0 driver cuda.core
refuses per-group counts plainly ("CUDA 12 SM splitting only supports homogeneous count values");
through `greenctx run --cuda-13.1` it is meant to see the 13.1 entry point and split.

Prints each group's size, the SMs its kernel ran on, and whether the groups' SMs are disjoint.
Exits 0 when every group has at least its asked SMs, every kernel stayed on as many SMs as its
group holds and no SM ran two groups' kernels; 1 when any of that fails; 2 when cuda.core refuses
the split (the message is printed); 77 without cuda.core or a GPU.

    python3 cuda_core_split.py [COUNT,COUNT,...]
"""
import ctypes
import sys

SOURCE = r"""
extern "C" __global__ void where(unsigned *smids, unsigned long long spin_ns) {
  if (threadIdx.x != 0) return;
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  smids[blockIdx.x] = id;
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < spin_ns);
}
"""


def main(argv):
    counts = tuple(int(c) for c in (argv[0] if argv else "112,16").split(","))
    try:
        import cuda.core as core
        from cuda.core import ContextOptions, SMResourceOptions
        import numpy as np
    except ImportError as e:
        print(f"cuda_core_split: cuda.core with green contexts is not importable ({e}): skipped",
              file=sys.stderr)
        return 77
    try:
        dev = core.Device(0)
        dev.set_current()
    except Exception as e:  # no driver or no GPU
        print(f"cuda_core_split: no CUDA device ({type(e).__name__}: {e}): skipped",
              file=sys.stderr)
        return 77
    version = getattr(getattr(core, "system", None), "driver_version", "unknown")
    print(f"cuda.core {core.__version__}, the driver's version as cuda.core reads it: {version}")
    sm = dev.resources.sm
    print(f"device: {sm.sm_count} SMs; split asked: {counts}")
    try:
        groups, rest = sm.split(SMResourceOptions(count=counts))
    except Exception as e:
        print(f"split refused: {type(e).__name__}: {e}")
        return 2
    print(f"groups: {[g.sm_count for g in groups]}, remainder {rest.sm_count}")
    kernel = core.Program(SOURCE, code_type="c++", options=core.ProgramOptions(
        std="c++17", arch=f"sm_{dev.arch}")).compile("cubin").get_kernel("where")
    launches = []
    for g in groups:
        ctx = dev.create_context(ContextOptions(resources=[g]))
        stream = ctx.create_stream()
        blocks = 8 * max(g.sm_count, 1)
        out = dev.allocate(blocks * 4, stream=stream)
        core.launch(stream, core.LaunchConfig(grid=blocks, block=32), kernel, out,
                    np.uint64(200_000))
        launches.append((g, ctx, stream, out, blocks))
    pinned = core.LegacyPinnedMemoryResource()
    ok, seen = True, []
    for i, (g, _ctx, stream, out, blocks) in enumerate(launches):
        host = pinned.allocate(blocks * 4)
        out.copy_to(host, stream=stream)
        stream.sync()
        raw = (ctypes.c_char * (blocks * 4)).from_address(int(host.handle))
        sms = set(np.frombuffer(raw, dtype=np.uint32).tolist())
        print(f"group {i}: asked {counts[i]}, holds {g.sm_count} SMs, its kernel ran on "
              f"{len(sms)} SMs")
        if g.sm_count < counts[i] or len(sms) > g.sm_count:
            ok = False
        seen.append(sms)
    shared = set().union(*[a & b for j, a in enumerate(seen) for b in seen[j + 1:]])
    print(f"SMs running two groups' kernels: {len(shared)}")
    return 0 if ok and not shared else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
