# SPDX-License-Identifier: Apache-2.0
"""Two PyTorch programs for the benchmark of real programs across processes
(scripts/torch-processes.sh): a small-batch inference loop that times each step, and a training-like
GEMM loop. Unmodified PyTorch that knows nothing of greenctx. Every input comes from a seeded CPU
generator (PyTorch's CUDA generator sizes its grids from the SM count, so a confined run would draw
other numbers), so that a run on a piece can be compared with the plain run. Prints one JSON line.

    python3 torch_processes.py infer [STEPS]        a 3-layer MLP (1024 wide), batch 8, STEPS
                                                    (default 3000) steps, each synchronized and
                                                    timed: p50 / p99 in us, and the last output
    python3 torch_processes.py train [STEPS] [--ready FILE]
                                                    STEPS (default 2500) fp32 4096^3 matmuls, each
                                                    result scaled back to at most 1; creates FILE
                                                    after its warm-up; prints the final matrix's sums
Exit 0; 2 on bad arguments; 77 when torch or a GPU is missing.
"""
import json
import sys
import time


def digest(t):
    d = t.double()
    return {"sum": float(d.sum()), "abs_sum": float(d.abs().sum()),
            "first": [float(v) for v in d.flatten()[:4]]}


def main(argv):
    if len(argv) < 2 or argv[1] not in ("infer", "train"):
        print(__doc__, file=sys.stderr)
        return 2
    role = argv[1]
    rest = argv[2:]
    ready = None
    if "--ready" in rest:
        i = rest.index("--ready")
        if i + 1 >= len(rest):
            print("torch_processes: --ready needs a file", file=sys.stderr)
            return 2
        ready = rest[i + 1]
        rest = rest[:i] + rest[i + 2:]
    try:
        steps = int(rest[0]) if rest else (3000 if role == "infer" else 2500)
    except ValueError:
        print(f"torch_processes: STEPS must be a whole number, not '{rest[0]}'", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError as e:
        print(f"torch_processes: no torch ({e})", file=sys.stderr)
        return 77
    if not torch.cuda.is_available():
        print("torch_processes: no CUDA device", file=sys.stderr)
        return 77
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda", 0)
    gen = torch.Generator().manual_seed(42)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    if role == "infer":
        layers = [torch.nn.Linear(1024, 1024) for _ in range(3)]
        with torch.no_grad():
            for layer in layers:
                layer.weight.copy_(torch.randn(1024, 1024, generator=gen) / 32)
                layer.bias.copy_(torch.randn(1024, generator=gen) / 32)
        model = torch.nn.Sequential(layers[0], torch.nn.GELU(), layers[1], torch.nn.GELU(),
                                    layers[2]).to(dev).eval()
        x = torch.randn(8, 1024, generator=gen).to(dev)
        with torch.no_grad():
            for _ in range(50):  # warm-up
                y = model(x)
            torch.cuda.synchronize()
            us = []
            for _ in range(steps):
                t0 = time.perf_counter()
                y = model(x)
                torch.cuda.synchronize()
                us.append((time.perf_counter() - t0) * 1e6)
        us.sort()
        out = {"role": "infer", "sms": sms, "steps": steps, "p50_us": us[len(us) // 2],
               "p99_us": us[min(len(us) - 1, int(len(us) * 0.99))], "output": digest(y)}
    else:
        a = torch.randn(4096, 4096, generator=gen).to(dev)
        b = (torch.randn(4096, 4096, generator=gen) / 64).to(dev)
        c = a @ b  # warm-up
        torch.cuda.synchronize()
        if ready:
            open(ready, "w").close()
        t0 = time.perf_counter()
        for _ in range(steps):
            c = a @ b
            a = c / c.abs().max()
        torch.cuda.synchronize()
        seconds = time.perf_counter() - t0
        out = {"role": "train", "sms": sms, "steps": steps, "seconds": seconds,
               "tflops": 2 * 4096 ** 3 * steps / seconds / 1e12, "output": digest(a)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
