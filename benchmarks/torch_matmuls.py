# SPDX-License-Identifier: Apache-2.0
"""An unmodified PyTorch program for `greenctx scale`: 20 bf16 matmuls of 8192^3 (the shape of the
the measurement), timed by the program itself from the first matmul to the synchronization
after the last, and printed as "matmuls: S s". Importing torch and making the inputs is left out
of that time but not of the program's wall time: scale --metric shows the difference.

    python3 torch_matmuls.py [N] [COUNT]
"""
import sys
import time

import torch


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    if not torch.cuda.is_available():
        print("torch_matmuls: no CUDA GPU visible to torch", file=sys.stderr)
        return 77
    g = torch.Generator(device="cpu").manual_seed(7)
    a = torch.randn(n, n, generator=g).to("cuda", torch.bfloat16)
    b = torch.randn(n, n, generator=g).to("cuda", torch.bfloat16)
    c = a @ b  # warm-up: cuBLAS handle and kernel choice
    torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(count):
        c = a @ b
    torch.cuda.synchronize()
    seconds = time.perf_counter() - start
    print(f"matmuls: {seconds:.6f} s ({count} of {n}^3 bf16, "
          f"{2 * n**3 * count / seconds / 1e12:.1f} TFLOP/s)")
    print(f"checksum: {float(c.float().sum()):.6e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
