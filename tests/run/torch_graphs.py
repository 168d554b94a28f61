# SPDX-License-Identifier: Apache-2.0
"""PyTorch CUDA graphs, unmodified, for `greenctx run`'s semantics check: the model of
torch_train.py, one whole training step (forward, backward, SGD) captured in a CUDA graph with
torch.cuda.graph after a warm-up on a side stream, as PyTorch's documentation does it, and replayed
30 times on new data copied into the static inputs; then an inference graph replayed on several
inputs and compared with eager execution. Prints every loss with repr() and the inference results
on stdout; the harness compares them with the plain run's (check_run.py --tolerance). Exits 77
with the reason on stderr when torch or a GPU is missing, 1 if a result is wrong. Knows nothing of
greenctx.

    python3 torch_graphs.py [REPLAYS]
"""
import math
import sys

import torch_setup


def main() -> int:
    replays = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    torch = torch_setup.cuda_torch("torch_graphs")
    if torch is None:
        return torch_setup.SKIP
    dev = torch.device("cuda", 0)
    model = torch_setup.model(torch, dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    teacher = torch.randn(256, 10, generator=gen, device=dev)
    batches = [torch.randn(1024, 256, generator=gen, device=dev) for _ in range(4)]
    labels = [(b @ teacher).argmax(dim=1) for b in batches]
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    static_x = batches[0].clone()
    static_y = labels[0].clone()

    # Warm-up on a side stream, then capture one whole training step.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            loss = loss_fn(model(static_x), static_y)
            loss.backward()
            opt.step()
    torch.cuda.current_stream().wait_stream(side)
    train_graph = torch.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with torch.cuda.graph(train_graph):
        static_loss = loss_fn(model(static_x), static_y)
        static_loss.backward()
        opt.step()

    losses = []
    for step in range(replays):
        static_x.copy_(batches[step % 4])
        static_y.copy_(labels[step % 4])
        train_graph.replay()
        value = static_loss.item()
        losses.append(value)
        print(f"replay {step} loss {value!r}")
    finite = all(math.isfinite(v) for v in losses)
    print(f"all losses finite: {finite}")

    # An inference graph, checked against eager execution of the same model.
    static_in = batches[0].clone()
    with torch.no_grad():
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(2):
                model(static_in)
        torch.cuda.current_stream().wait_stream(side)
        infer_graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(infer_graph):
            static_out = model(static_in)
        all_match = True
        for k in range(8):
            static_in.copy_(batches[k % 4] * (1 + k / 8))
            infer_graph.replay()
            eager = model(batches[k % 4] * (1 + k / 8))
            match = torch.allclose(static_out, eager, rtol=1e-5, atol=1e-5)
            all_match = all_match and match
            total = static_out.double().sum().item()
            print(f"inference {k}: output sum {total!r}, matches eager: {match}")
    torch.cuda.synchronize()
    return 0 if finite and all_match else 1


if __name__ == "__main__":
    sys.exit(main())
