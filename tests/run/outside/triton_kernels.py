# SPDX-License-Identifier: Apache-2.0
"""Triton, unmodified: @triton.jit kernels on torch tensors: a masked vector add of integers in
fp32 (exact) and a row softmax (one program per row, tl.max / tl.exp / tl.sum). Results are
summed on the CPU in float64 and compared with torch on the CPU; the softmax's checksum is
compared within --tolerance 1e-5 (the same Triton kernel runs either way; the bound is fp32's).
The add is then checked with fill.py. Exits 77 without torch, Triton or a GPU, 1 on a wrong
result or an escape.

    python3 triton_kernels.py
"""
import sys
import types

import common
import fill

NAME = "triton_kernels"

try:
    import triton
    import triton.language as tl
    jit = triton.jit
except Exception as e:  # the kernels below are then plain functions, never called
    triton, jit, MISSING = None, (lambda f: f), f"{type(e).__name__}: {e}"
    tl = types.SimpleNamespace(constexpr=int)


@jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


@jit
def softmax_kernel(out_ptr, in_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < n_cols
    x = tl.load(in_ptr + row * stride + offs, mask=mask, other=-float("inf"))
    num = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * stride + offs, num / tl.sum(num, axis=0), mask=mask)


def main():
    torch = common.need(NAME, "torch")
    if triton is None:
        common.skip(NAME, f"triton cannot be imported ({MISSING})".replace("\n", " "))
    if not torch.cuda.is_available():
        common.skip(NAME, "no CUDA GPU visible to torch")
    dev = torch.device("cuda", 0)
    gen = torch.Generator().manual_seed(0)  # data made on the CPU: the same for any SM count
    ok = True

    n = (1 << 20) + 123
    x = torch.randint(-1000, 1000, (n,), generator=gen).float()
    y = torch.randint(-1000, 1000, (n,), generator=gen).float()
    dx, dy = x.to(dev), y.to(dev)
    dout = torch.empty_like(dx)
    grid = (triton.cdiv(n, 1024),)
    add_kernel[grid](dx, dy, dout, n, BLOCK=1024)
    out = dout.cpu()
    same = bool(torch.equal(out, x + y))
    ok &= same
    print(f"vector add of {n} integers: sum {int(out.double().sum())}, exact: {same}")

    rows, cols = 1024, 781
    z = torch.randn(rows, cols, generator=gen) * 4
    dz = z.to(dev)
    dsm = torch.empty_like(dz)
    softmax_kernel[(rows,)](dsm, dz, dz.stride(0), cols, BLOCK=triton.next_power_of_2(cols))
    sm = dsm.cpu().double()
    weights = torch.arange(cols, dtype=torch.float64)
    err = float((sm - torch.softmax(z.double(), dim=1)).abs().max())
    ok &= err < 1e-5
    print(f"softmax {rows}x{cols}: checksum {float((sm * weights).sum())!r}, "
          f"row sums {float(sm.sum())!r}, matches torch: {err < 1e-5}")

    stream = torch.cuda.current_stream()
    confined = fill.check("triton add", lambda: (add_kernel[grid](dx, dy, dout, n, BLOCK=1024),
                                                 stream.synchronize()))
    return 0 if ok and confined is not False else 1


if __name__ == "__main__":
    sys.exit(main())
