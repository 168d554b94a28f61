# SPDX-License-Identifier: Apache-2.0
"""Data-parallel PyTorch training, unmodified, for `greenctx run`'s semantics check on every GPU:
one process per GPU (torch.multiprocessing), DistributedDataParallel over NCCL, the model of
torch_setup.py, each rank training on its own shard (seed 1234 + rank) with labels from one fixed
"teacher", SGD. DDP averages the gradients with NCCL all-reduces during the backward pass, so the
ranks' parameters must stay identical; every step's loss is averaged over the ranks with one more
all-reduce. Rank 0 prints every global loss with repr() (full precision), whether the parameters
are equal on every rank (exactly, compared as bytes), and whether the loss fell; the harness
compares this with the plain run's (check_run.py --tolerance). With one GPU it runs with one
process (NCCL over one rank), so the program and the harness are exercised there too.

Exits 77 with the reason on stderr when torch, a GPU or torch's NCCL is missing, 1 if a loss is
not finite, the loss did not fall or the ranks' parameters differ. Knows nothing of greenctx.

    python3 torch_ddp.py [STEPS]
"""
import math
import os
import socket
import sys

import torch_setup


def worker(rank, world, steps, port, failures):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(rank)
    dev = torch.device("cuda", rank)
    dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
    model = DistributedDataParallel(torch_setup.model(torch, dev), device_ids=[rank])
    teacher_gen = torch.Generator(device=dev)
    teacher_gen.manual_seed(99)
    teacher = torch.randn(256, 10, generator=teacher_gen, device=dev)
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234 + rank)
    x = torch.randn(2048, 256, generator=gen, device=dev)
    y = (x @ teacher).argmax(dim=1)
    loss_fn = torch.nn.CrossEntropyLoss()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for step in range(steps):
        loss = torch_setup.train_step(model, loss_fn, opt, x, y)  # DDP all-reduces in backward
        total = loss.detach().clone()
        dist.all_reduce(total)
        value = total.item() / world
        losses.append(value)
        if rank == 0:
            print(f"step {step} loss {value!r}", flush=True)
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    gathered = [torch.empty_like(flat) for _ in range(world)]
    dist.all_gather(gathered, flat)
    equal = all(torch.equal(g, gathered[0]) for g in gathered)
    dist.destroy_process_group()
    finite = all(math.isfinite(v) for v in losses)
    fell = finite and losses[-1] < losses[0]
    if rank == 0:
        print(f"ranks: {world}")
        print(f"parameters equal on every rank: {equal}")
        print(f"all losses finite: {finite}")
        print(f"loss fell: {fell}", flush=True)
    if not (equal and finite and fell):
        failures.put(rank)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> int:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    torch = torch_setup.cuda_torch("torch_ddp")
    if torch is None:
        return torch_setup.SKIP
    import torch.distributed as dist
    import torch.multiprocessing as mp
    if not dist.is_available() or not dist.is_nccl_available():
        print("torch_ddp: this torch has no NCCL: skipped", file=sys.stderr)
        return torch_setup.SKIP
    world = torch.cuda.device_count()
    ctx = mp.get_context("spawn")
    failures = ctx.SimpleQueue()
    mp.spawn(worker, args=(world, steps, free_port(), failures), nprocs=world, join=True)
    return 1 if not failures.empty() else 0


if __name__ == "__main__":
    sys.exit(main())
