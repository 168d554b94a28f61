# SPDX-License-Identifier: Apache-2.0
"""numba-cuda, unmodified: @cuda.jit kernels on device arrays and a stream of numba's own (an
integer axpy, a histogram with atomics, a block reduction in shared memory) and numba's
cuda.reduce; every result is an integer, printed exactly and checked against numpy. The axpy is
then checked with fill.py. Exits 77 without numba-cuda or a GPU, 1 on a wrong result or an escape.
numba-cuda 0.30 fails with numpy 2.5 (np.row_stack): the suite runs it with numpy 2.2.

    python3 numba_kernels.py [N]
"""
import sys

try:
    import numpy as np  # a global, as numba's kernels expect it
except ImportError:
    np = None  # then numba is missing too: main() skips

import common
import fill

NAME = "numba_kernels"
THREADS = 256
cuda = None  # numba.cuda, imported by main() (a global, as the kernels expect it)


def main(argv):
    global cuda
    cuda = common.need(NAME, "numba.cuda")
    if not cuda.is_available():
        common.skip(NAME, "numba sees no CUDA GPU")
    n = int(argv[0]) if argv else 1 << 20

    @cuda.jit
    def axpy(a, x, y, out):
        i = cuda.grid(1)
        if i < out.size:
            out[i] = a * x[i] + y[i]

    @cuda.jit
    def histogram(data, bins):
        i = cuda.grid(1)
        if i < data.size:
            cuda.atomic.add(bins, data[i] % bins.size, 1)

    @cuda.jit
    def block_sums(x, total):
        part = cuda.shared.array(THREADS, dtype=np.int64)
        i, t = cuda.grid(1), cuda.threadIdx.x
        part[t] = x[i] if i < x.size else 0
        cuda.syncthreads()
        step = THREADS // 2
        while step > 0:
            if t < step:
                part[t] += part[t + step]
            cuda.syncthreads()
            step //= 2
        if t == 0:
            cuda.atomic.add(total, 0, part[0])

    rng = np.random.default_rng(0)
    x = rng.integers(-1000, 1000, size=n, dtype=np.int64)
    y = rng.integers(-1000, 1000, size=n, dtype=np.int64)
    stream = cuda.stream()
    blocks = (n + THREADS - 1) // THREADS
    dx, dy = cuda.to_device(x, stream=stream), cuda.to_device(y, stream=stream)
    dout = cuda.device_array(n, dtype=np.int64, stream=stream)
    axpy[blocks, THREADS, stream](7, dx, dy, dout)
    out = dout.copy_to_host(stream=stream)
    stream.synchronize()
    ok = same = bool((out == 7 * x + y).all())
    print(f"axpy: sum {int(out.sum())}, matches numpy: {same}")

    data = rng.integers(0, 1 << 30, size=n, dtype=np.int64)
    dbins = cuda.to_device(np.zeros(97, dtype=np.int64), stream=stream)
    histogram[blocks, THREADS, stream](cuda.to_device(data, stream=stream), dbins)
    bins = dbins.copy_to_host(stream=stream)
    stream.synchronize()
    same = bool((bins == np.bincount(data % 97, minlength=97)).all())
    ok &= same
    print(f"histogram of 97 bins: max {int(bins.max())}, min {int(bins.min())}, "
          f"matches numpy: {same}")

    dtotal = cuda.to_device(np.zeros(1, dtype=np.int64), stream=stream)
    block_sums[blocks, THREADS, stream](dout, dtotal)
    total = int(dtotal.copy_to_host(stream=stream)[0])
    stream.synchronize()
    reduced = int(cuda.reduce(lambda a, b: a + b)(dout))
    same = total == reduced == int(out.sum())
    ok &= same
    print(f"block sums {total}, cuda.reduce {reduced}, match numpy: {same}")

    confined = fill.check("numba axpy", lambda: (axpy[blocks, THREADS, stream](7, dx, dy, dout),
                                                 stream.synchronize()))
    return 0 if ok and confined is not False else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
