# SPDX-License-Identifier: Apache-2.0
"""An unmodified PyTorch script for `greenctx run`'s GPU check: a large matmul on exactly
representable data (integers -2..2 in fp32: every sum is exact, whatever kernel cuBLAS picks), timed
with CUDA events. Prints the SHA-256 of the result, so a run confined to N SMs can be compared
with an unconfined one, and the time per matmul. Knows nothing of greenctx.

    python3 torch_matmul.py [N] [REPEAT]
"""
import hashlib
import sys

import torch


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 8192
    repeat = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    if not torch.cuda.is_available():
        print("torch_matmul: no CUDA GPU visible to torch", file=sys.stderr)
        return 3
    g = torch.Generator(device="cpu").manual_seed(1234)
    a = torch.randint(-2, 3, (n, n), generator=g, dtype=torch.float32).cuda()
    b = torch.randint(-2, 3, (n, n), generator=g, dtype=torch.float32).cuda()
    torch.backends.cuda.matmul.allow_tf32 = False
    c = a @ b  # warm-up
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(repeat):
        c = a @ b
    stop.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(stop) / repeat
    digest = hashlib.sha256(c.cpu().numpy().tobytes()).hexdigest()
    print(f"torch matmul {n}x{n} fp32: {ms:.3f} ms per matmul, sha256 {digest}, "
          f"{torch.cuda.get_device_properties(0).multi_processor_count} SMs on the device")
    return 0


if __name__ == "__main__":
    sys.exit(main())
