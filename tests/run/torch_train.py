# SPDX-License-Identifier: Apache-2.0
"""A small PyTorch training loop, unmodified, for `greenctx run`'s semantics check: three
nn.Linear layers with GELU between them, cross-entropy, SGD; fixed seeds, data made on the GPU by
a torch.Generator (labels from a fixed random "teacher", so the loss falls). The forward pass runs
on the main thread and the backward pass on autograd's device thread: a confined run once printed
nan here from the second step on, because the two threads did not share a legacy stream (the
optimizer step read gradients the backward kernels had not written yet). The layers are wide
enough (2048) that the GPU lags the host by milliseconds, which makes such a race show. Prints
every loss with repr() (full precision) on stdout; the harness compares them with the plain run's
(check_run.py --tolerance). Exits 77 with the reason on stderr when torch or a GPU is missing, 1
if a loss is not finite or the loss did not fall. Knows nothing of greenctx.

    python3 torch_train.py [STEPS]
"""
import math
import sys

import torch_setup


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    torch = torch_setup.cuda_torch("torch_train")
    if torch is None:
        return torch_setup.SKIP
    dev = torch.device("cuda", 0)
    model = torch_setup.model(torch, dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    x = torch.randn(4096, 256, generator=gen, device=dev)
    teacher = torch.randn(256, 10, generator=gen, device=dev)
    y = (x @ teacher).argmax(dim=1)
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        # forward on this thread, backward on autograd's device thread
        value = torch_setup.train_step(model, loss_fn, opt, x, y).item()
        losses.append(value)
        print(f"step {step} loss {value!r}")
    finite = all(math.isfinite(v) for v in losses)
    fell = finite and losses[-1] < losses[0]
    print(f"all losses finite: {finite}")
    print(f"loss fell: {fell}")
    return 0 if finite and fell else 1


if __name__ == "__main__":
    sys.exit(main())
