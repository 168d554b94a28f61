# SPDX-License-Identifier: Apache-2.0
"""cuda.core, unmodified: a C++ kernel compiled at run time by NVRTC (cuda.core's Program), loaded
and launched with cuda.core's launch() on a stream of its own, on memory from Device.allocate;
results copied back through pinned host memory. The kernel hashes integers and records each
block's %smid (--smid-out). Prints an exact checksum. The launch is then checked with fill.py.
Exits 77 without cuda.core or a GPU, 1 on a wrong result or an escape.

    python3 cuda_core_launch.py [--smid-out FILE]
"""
import ctypes
import sys

import common
import fill

NAME = "cuda_core_launch"

SOURCE = r"""
extern "C" __global__ void hash_ints(const unsigned *in, unsigned *out, unsigned n, unsigned k,
                                     unsigned *smids) {
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    out[i] = (in[i] ^ k) * 2246822519u + (in[i] >> 13);
""" + common.RECORD_SMID + "}\n"


def host_view(np, buf, count):
    """A numpy uint32 view of a pinned host Buffer."""
    raw = (ctypes.c_char * (count * 4)).from_address(int(buf.handle))
    return np.frombuffer(raw, dtype=np.uint32)


def main(argv):
    try:
        import cuda.core as core
        core.Program  # noqa: B018 (cuda.core before 1.0 keeps everything in .experimental)
    except (ImportError, AttributeError):
        core = common.need(NAME, "cuda.core.experimental")
    import numpy as np
    try:
        dev = core.Device(0)
        dev.set_current()
    except Exception as e:
        common.skip(NAME, f"no CUDA device for cuda.core ({type(e).__name__}: {e})".replace(
            "\n", " "))
    opts = core.ProgramOptions(std="c++17", arch=f"sm_{dev.arch}")
    kernel = core.Program(SOURCE, code_type="c++", options=opts).compile("cubin").get_kernel(
        "hash_ints")
    stream = dev.create_stream()
    n, blocks, threads, k = 1 << 20, 1024, 256, 0x9E3779B9
    pinned = core.LegacyPinnedMemoryResource()
    h_in, h_out, h_smids = (pinned.allocate(size) for size in (n * 4, n * 4, blocks * 4))
    d_in, d_out, d_smids = (dev.allocate(size, stream=stream) for size in (n * 4, n * 4,
                                                                            blocks * 4))
    data = np.random.default_rng(0).integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32)
    host_view(np, h_in, n)[:] = data
    d_in.copy_from(h_in, stream=stream)
    config = core.LaunchConfig(grid=blocks, block=threads)
    args = (d_in, d_out, np.uint32(n), np.uint32(k), d_smids)
    core.launch(stream, config, kernel, *args)
    d_out.copy_to(h_out, stream=stream)
    d_smids.copy_to(h_smids, stream=stream)
    stream.sync()
    got = host_view(np, h_out, n).copy()
    want = (data ^ np.uint32(k)) * np.uint32(2246822519) + (data >> np.uint32(13))
    same = bool((got == want).all())
    print(f"NVRTC kernel via cuda.core launch: sum {int(got.astype(np.uint64).sum())}, "
          f"matches numpy: {same}")
    smid_out = common.option(argv, "--smid-out")
    if smid_out:
        common.write_smids(smid_out, "cuda_core_kernel", host_view(np, h_smids, blocks))

    confined = fill.check("cuda.core launch", lambda: (core.launch(stream, config, kernel, *args),
                                                       stream.sync()))
    return 0 if same and confined is not False else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
