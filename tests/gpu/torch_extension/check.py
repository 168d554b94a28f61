#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""GPU check: a PyTorch C++ extension built with torch's own cpp_extension that includes
greenctx/greenctx.hpp (C++20), makes a 16,rest partition set and runs a torch matmul on each
piece's stream. The products must equal torch's plain matmul on the same inputs, and the pieces
must hold 16 and the rest of the SMs.

    check.py REPO_ROOT LIBGREENCTX_A BUILD_DIR

Exit 0 passed, 1 a check failed, 77 no GPU or no torch with CUDA here.
"""
import os
import subprocess
import sys
import time
from pathlib import Path


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-3].strip(), file=sys.stderr)
        return 2
    root, lib, build = Path(argv[1]).resolve(), Path(argv[2]).resolve(), Path(argv[3]).resolve()
    try:
        import torch
        from torch.utils import cpp_extension
    except ImportError as e:
        print(f"torch extension: SKIPPED: no torch here ({e})")
        return 77
    if not torch.cuda.is_available():
        print("torch extension: SKIPPED: torch sees no GPU")
        return 77
    build.mkdir(parents=True, exist_ok=True)
    cuda_home = cpp_extension.CUDA_HOME or "/usr/local/cuda"
    started = time.time()
    ext = cpp_extension.load(
        name="greenctx_partition_op",
        sources=[str(root / "tests/gpu/torch_extension/partition_op.cpp")],
        extra_cflags=["-std=c++20", "-O1"],
        extra_include_paths=[str(root / "include"), os.path.join(cuda_home, "include")],
        extra_ldflags=[str(lib), "-ldl"],
        build_directory=str(build), with_cuda=True, verbose=False)
    print(f"built the extension with -std=c++20 in {time.time() - started:.0f} s")

    failures = []
    gen = torch.Generator().manual_seed(7)
    a = torch.randn(1024, 1024, generator=gen).cuda()
    b = torch.randn(1024, 1024, generator=gen).cuda()
    plain = a @ b
    torch.cuda.synchronize()
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    held = []
    for piece in (0, 1):
        out, n = ext.matmul_on_piece(a, b, "16,rest", piece)
        held.append(n)
        diff = (out - plain).abs().max().item()
        same = torch.equal(out, plain)
        print(f"piece {piece}: {n} SMs; product equal to the plain matmul: {same} "
              f"(largest difference {diff:g})")
        if not same:
            failures.append(f"piece {piece}'s product differs from the plain matmul by {diff:g}")
    if held[0] != 16 or held[0] + held[1] != sms:
        failures.append(f"the pieces hold {held} SMs, expected 16 and {sms - 16}")
    # Refusals, each in a child process (a crash there is a failure, not the end of this check):
    # greenctx's own request_error through the extension, and the extension's bad piece.
    for split, piece, want in (("rest,16", 0, "RuntimeError"), ("16,rest", 5, "IndexError")):
        code = (f"import torch, sys; sys.path.insert(0, {str(build)!r}); "
                "import greenctx_partition_op as ext; a = torch.ones(8, 8, device='cuda')\n"
                f"try: ext.matmul_on_piece(a, a, {split!r}, {piece})\n"
                "except Exception as e: print(type(e).__name__ + ': ' + str(e).splitlines()[0])\n"
                "else: print('accepted')")
        p = subprocess.run([sys.executable, "-X", "faulthandler", "-c", code],
                           capture_output=True, text=True, timeout=120)
        said = (p.stdout.strip().splitlines() or [""])[-1]
        print(f"{split} piece {piece}: exit {p.returncode}, {said}")
        if p.returncode != 0 or not said.startswith(want):
            failures.append(f"{split} piece {piece}: expected {want}, got exit {p.returncode} "
                            f"{said!r} {p.stderr.strip()[-300:]!r}")
    for f in failures:
        print(f"FAIL: {f}")
    print("torch extension: " + ("PASS" if not failures else f"{len(failures)} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
