# SPDX-License-Identifier: Apache-2.0
"""CuPy, unmodified: a RawKernel (integer hashing of a ring; each block records its %smid), an
ElementwiseKernel, a cuBLAS matmul of small integers in fp32 (exact whatever kernel cuBLAS picks
for the SM count it is told) and a cuFFT round trip of integers. Integers are printed exactly; the
FFT's energy (summed on the CPU in float64) within --tolerance 1e-5. The matmul is then checked
with fill.py. Exits 77 without CuPy or a GPU, 1 on a wrong result or an escape.

    python3 cupy_kernels.py [--smid-out FILE]
"""
import sys

import common
import fill

NAME = "cupy_kernels"

RING = r"""
extern "C" __global__ void ring_hash(const unsigned *in, unsigned *out, unsigned n,
                                     unsigned *smids) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i] * 2654435761u ^ (in[(i + 1) % n] >> 7);
""" + common.RECORD_SMID + "}\n"


def main(argv):
    cp = common.need(NAME, "cupy")
    import numpy as np
    try:
        devices = cp.cuda.runtime.getDeviceCount()
    except cp.cuda.runtime.CUDARuntimeError as e:
        common.skip(NAME, f"no CUDA device for CuPy ({e})")
    if devices == 0:
        common.skip(NAME, "no CUDA device for CuPy")
    ok = True
    rng = np.random.default_rng(0)

    n, threads = 1 << 18, 256
    blocks = n // threads
    ring = cp.RawKernel(RING, "ring_hash")
    host = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    src, out = cp.asarray(host), cp.empty(n, dtype=cp.uint32)
    smids = cp.full(blocks, 0xFFFFFFFF, dtype=cp.uint32)
    ring((blocks,), (threads,), (src, out, cp.uint32(n), smids))
    want = host * np.uint32(2654435761) ^ (np.roll(host, -1) >> np.uint32(7))
    got = cp.asnumpy(out)
    same = bool((got == want).all())
    ok &= same
    print(f"RawKernel ring_hash: sum {int(got.astype(np.uint64).sum())}, matches numpy: {same}")
    smid_out = common.option(argv, "--smid-out")
    if smid_out:
        common.write_smids(smid_out, "cupy_rawkernel", cp.asnumpy(smids))

    mix = cp.ElementwiseKernel("int64 x, int64 y", "int64 z", "z = (x * 3 + y) % 1000003",
                               "mix_ints")
    a = rng.integers(-10**6, 10**6, size=1 << 20)
    b = rng.integers(-10**6, 10**6, size=1 << 20)
    z = cp.asnumpy(mix(cp.asarray(a), cp.asarray(b)))
    same = bool((z == np.fmod(a * 3 + b, 1000003)).all())  # C's % keeps the dividend's sign
    ok &= same
    print(f"ElementwiseKernel mix_ints: sum {int(z.sum())}, matches numpy: {same}")

    ma = rng.integers(-2, 3, size=(1024, 1024)).astype(np.float32)
    mb = rng.integers(-2, 3, size=(1024, 1024)).astype(np.float32)
    da, db = cp.asarray(ma), cp.asarray(mb)
    dc = da @ db
    c = cp.asnumpy(dc)
    same = bool((c == ma.astype(np.float64) @ mb.astype(np.float64)).all())  # exact: integers
    ok &= same
    print(f"cuBLAS matmul 1024^3 of integers: sum {int(c.astype(np.int64).sum())}, exact: {same}")

    signal = rng.integers(-8, 9, size=1 << 16).astype(np.complex64)
    spectrum = cp.fft.fft(cp.asarray(signal))
    back = cp.asnumpy(cp.fft.ifft(spectrum))
    same = bool((np.rint(back.real) == signal.real).all() and (np.abs(back.imag) < 0.01).all())
    ok &= same
    energy = float((np.abs(cp.asnumpy(spectrum).astype(np.complex128)) ** 2).sum() / signal.size)
    print(f"cuFFT 65536 points: energy {energy!r} (exact {int((signal.real ** 2).sum())}), "
          f"round trip exact: {same}")

    stream = cp.cuda.get_current_stream()
    confined = fill.check("cuBLAS matmul", lambda: (cp.matmul(da, db, out=dc),
                                                    stream.synchronize()))
    return 0 if ok and confined is not False else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
