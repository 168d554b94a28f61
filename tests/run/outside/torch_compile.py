# SPDX-License-Identifier: Apache-2.0
"""torch.compile, unmodified: a small MLP (Linear, GELU, LayerNorm) compiled by the default
inductor backend (Triton kernels, cuBLAS for the matmuls), trained 20 steps with SGD and momentum,
forward and backward through the compiled graphs. Data and initial weights come from seeded CPU
generators (GPU random numbers depend on the grid, hence on the SM count). Losses are printed
with repr() and compared within --tolerance 1e-5 (cuBLAS and inductor pick kernels by the SM
count: the last bits may differ). The compiled forward is then checked with fill.py. Exits 77
without torch or a GPU, 1 if a loss is not finite, did not fall, or the work escaped.

    python3 torch_compile.py [STEPS]
"""
import sys

import common
import fill

NAME = "torch_compile"


def main(argv):
    torch = common.need(NAME, "torch")
    if not torch.cuda.is_available():
        common.skip(NAME, "no CUDA GPU visible to torch")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    steps = int(argv[0]) if argv else 20
    dev = torch.device("cuda", 0)
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(128, 512), nn.GELU(), nn.LayerNorm(512),
                          nn.Linear(512, 512), nn.GELU(), nn.Linear(512, 10)).to(dev)
    gen = torch.Generator().manual_seed(1234)
    x = torch.randn(2048, 128, generator=gen)
    y = (x @ torch.randn(128, 10, generator=gen)).argmax(dim=1)
    x, y = x.to(dev), y.to(dev)
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    losses = []
    with common.timer(NAME, f"{steps} compiled training steps (compilation included)"):
        for step in range(steps):
            opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(compiled(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
            print(f"step {step} loss {losses[-1]!r}")
    good = common.report_losses(losses)

    stream = torch.cuda.current_stream()
    confined = fill.check("compiled forward", lambda: (compiled(x), stream.synchronize()))
    return 0 if good and confined is not False else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
