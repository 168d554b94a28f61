# SPDX-License-Identifier: Apache-2.0
"""What the programs of tests/run/outside share: the skip code (77, with a one-line reason on
stderr), diagnostics on stderr, and --smid-out files. Knows nothing of greenctx."""
import sys
import time

SKIP = 77


def skip(name, why):
    """Ends the program with the skip code: its framework or a GPU is missing."""
    print(f"{name}: {why}: skipped", file=sys.stderr)
    sys.exit(SKIP)


def need(name, module):
    """Imports `module` (a dotted name), or skips the program when that fails."""
    import importlib
    try:
        return importlib.import_module(module)
    except Exception as e:  # ImportError, or a framework that fails as it loads its libraries
        skip(name, f"{module} cannot be imported ({type(e).__name__}: {e})".replace("\n", " "))


def gpu_count():
    """How many GPUs the CUDA driver sees (libcuda.so.1 through ctypes); 0 without a driver."""
    import ctypes
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        count = ctypes.c_int(0)
        if cuda.cuInit(0) != 0 or cuda.cuDeviceGetCount(ctypes.byref(count)) != 0:
            return 0
        return count.value
    except OSError:
        return 0


def say(name, what):
    """A diagnostic (times, sizes): stderr, never stdout, which must not differ between runs."""
    print(f"{name}: {what}", file=sys.stderr, flush=True)


def option(argv, flag):
    """The value after `flag` in argv, or None."""
    return argv[argv.index(flag) + 1] if flag in argv[:-1] else None


# CUDA C++ for a kernel's first thread of each block: records the block's %smid in smids[] and stays
# 10 us, so that the blocks spread over the SMs. Pasted into the kernels of the programs' own
# sources (NVRTC through CuPy and cuda.core).
RECORD_SMID = r"""
  if (threadIdx.x == 0) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    smids[blockIdx.x] = id;
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    const long long c0 = clock64();
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < 10000 && clock64() - c0 < 1000000);
  }
"""


def report_losses(losses):
    """Prints the last line of a training loop's output, whether every loss was finite and fell,
    and returns that."""
    import math
    good = all(math.isfinite(v) for v in losses) and losses[-1] < losses[0]
    print(f"loss finite and fell: {good}")
    return good


def write_smids(path, name, ids):
    """Appends a --smid-out line for check_run.py --smid: "NAME DEVICE ID ID ..." (device 0)."""
    with open(path, "a") as f:
        f.write(" ".join([name, "0"] + [str(i) for i in sorted(set(int(x) for x in ids))]) + "\n")


class timer:
    """with timer(name, "what"): ... says on stderr how long it took."""

    def __init__(self, name, what):
        self.name, self.what = name, what

    def __enter__(self):
        self.start = time.monotonic()
        return self

    def __exit__(self, *exc):
        say(self.name, f"{self.what}: {time.monotonic() - self.start:.3f} s")
        return False
