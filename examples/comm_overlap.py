#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Overlap an NCCL all-reduce with a GEMM loop on every GPU, each on its own green context.

One process per GPU (started here with torch.multiprocessing, or by torchrun: RANK, WORLD_SIZE and
LOCAL_RANK are honoured). Each process splits its GPU into "k,rest" with greenctx: the all-reduce
(torch.distributed, NCCL backend) runs on a stream of the k-SM green context, a loop of large
matmuls on a stream of the rest. For each message size three scenarios are measured:

  alone        the all-reduce on a plain torch stream (all SMs), no GEMM: its best case
  shared       the all-reduce and the GEMM loop on two plain torch streams (all SMs, no partition)
  partitioned  the all-reduce on the k-SM green context, the GEMM loop on the rest

The all-reduce is issued with async_op=False inside `with torch.cuda.stream(comm)`: since PyTorch
2.8 (pytorch/pytorch#150398) ProcessGroupNCCL then launches the collective on the current stream,
which here is the green context's. Older PyTorch launches it on an internal stream of the primary
context (all SMs); the program says so and the partitioned numbers then do not confine NCCL.

Method. Before each sample the GEMM queue is topped up to about 10 ms of work. A sample is a start
event, the all-reduce, an end event on the all-reduce's stream, and a wait for the end event; its
time is the event time (from when the stream reached the all-reduce to its end). Each rank keeps
its samples; the report shows, per scenario, the slowest rank's p50 and p99 (nearest rank), the
bus bandwidth at that p50 (size/time * 2(n-1)/n) and the mean GEMM TFLOP/s over the ranks.
NCCL_NVLS_ENABLE is set to 0 (NVLink multicast off) unless the environment sets it.

Confinement is checked before anything is timed: one rank at a time fills its k SMs
(greenctx.fill_sms: spinning blocks that leave no room for another) for 0.3 s and every rank
launches one all-reduce on its k-SM stream. If the filled rank's part ran on other SMs, the
all-reduce ends while the fill still runs; the report says per rank what was seen.

GREENCTX_COMM_ONE_GPU_TEST=1 accepts one GPU, for testing this program on a 1-GPU machine: the
all-reduce is then a mean over one rank (NCCL runs a local kernel for it, where a sum does nothing),
which communicates nothing, so the numbers answer nothing (the report says so).

Usage:
  python examples/comm_overlap.py [--comm-sms 16] [--sizes-mib 1,16,256] [--samples 50]
                                  [--nproc N] [--json FILE]
  torchrun --nproc-per-node 2 examples/comm_overlap.py --comm-sms 16

Exit codes (as the greenctx CLI): 0 ok; 2 bad arguments or a split a GPU cannot make; 3 no
PyTorch, no greenctx module, no NVIDIA driver, or fewer than 2 GPUs; 4 the driver lacks a needed
feature; 5 another CUDA or NCCL error.
"""
import argparse
import datetime
import functools
import json
import os
import socket
import sys
import time

from example_support import GemmLoop, fail as fail_as, percentile

PROG = "comm_overlap"
# The CLI's values of GREENCTX_COMM_ONE_GPU_TEST; here each means the one-rank mean.
ONE_GPU_TEST = os.environ.get("GREENCTX_COMM_ONE_GPU_TEST") in ("1", "mean", "self")
MIN_GPUS = 1 if ONE_GPU_TEST else 2


fail = functools.partial(fail_as, PROG)


def parse_args():
    p = argparse.ArgumentParser(
        prog="comm_overlap.py",
        description="NCCL all-reduce on a k-SM green context overlapping a GEMM loop on the rest, "
                    "one process per GPU, against sharing all SMs.")
    p.add_argument("--comm-sms", type=int, default=16,
                   help="SMs of the all-reduce's green context on each GPU (default 16)")
    p.add_argument("--sizes-mib", default="1,16,256",
                   help="message sizes in MiB, separated by commas (default 1,16,256)")
    p.add_argument("--samples", type=int, default=50, help="timed all-reduces per scenario "
                                                           "and size (default 50)")
    p.add_argument("--warmup", type=int, default=5, help="untimed all-reduces first (default 5)")
    p.add_argument("--gemm-size", type=int, default=8192, help="N of the NxN bf16 matmul loop")
    p.add_argument("--nproc", type=int, default=0,
                   help="processes (GPUs) when not under torchrun (default: every GPU)")
    p.add_argument("--json", metavar="FILE", help="write every rank's samples and the summary")
    args = p.parse_args()
    try:
        args.sizes = [int(x) for x in args.sizes_mib.split(",")]
    except ValueError:
        p.error(f"--sizes-mib: '{args.sizes_mib}' is not a list of whole numbers of MiB "
                f"(e.g. 1,16,256)")
    if any(s < 1 for s in args.sizes) or len(set(args.sizes)) != len(args.sizes):
        p.error("--sizes-mib: each size must be at least 1 MiB and listed once")
    if args.comm_sms < 1 or args.samples < 1 or args.warmup < 0 or args.gemm_size < 64:
        p.error("--comm-sms and --samples must be at least 1, --warmup at least 0, --gemm-size "
                "at least 64")
    if args.nproc < 0 or 0 < args.nproc < MIN_GPUS:
        p.error(f"--nproc must be {MIN_GPUS} or more (or 0: every GPU)")
    return args


def reduce_op(dist):
    """The sum; in one-GPU test mode the mean, for which NCCL runs a kernel over one rank too."""
    return dist.ReduceOp.AVG if ONE_GPU_TEST else dist.ReduceOp.SUM


def check_confinement(torch, dist, greenctx, rank, world, comm_stream, fill_stream, fill_s=0.3):
    """Whether this rank's all-reduce kernel stays on the SMs of comm_stream's green context.
    One rank at a time fills its partition (greenctx.fill_sms: no other block fits there) for
    fill_s seconds, and every rank then launches one small all-reduce on its comm stream. Kept to
    the partition, the filled rank's part waits for the fill, and the whole all-reduce with it;
    run elsewhere, it ends while the fill still runs. Returns True (waited), False (ran elsewhere)
    or None (the fill had ended before the launch: not known)."""
    buf = torch.ones(1024, device="cuda", dtype=torch.float32)
    with torch.cuda.stream(comm_stream):  # a first one: NCCL may set up connections on it
        dist.all_reduce(buf, op=reduce_op(dist), async_op=False)
    comm_stream.synchronize()
    mine = None
    for filler in range(world):
        dist.barrier()
        if rank == filler:
            greenctx.fill_sms(fill_stream, fill_s)
            time.sleep(fill_s / 10)  # the spinning blocks are resident by now
            filled_at_launch = not fill_stream.ready()
        with torch.cuda.stream(comm_stream):
            dist.all_reduce(buf, op=reduce_op(dist), async_op=False)
            end = torch.cuda.Event()
            end.record()
        end.synchronize()
        if rank == filler:
            still_full = not fill_stream.ready()
            fill_stream.synchronize()
            mine = (not still_full) if filled_at_launch else None
    return mine


def measure(torch, dist, args, nbytes, comm_stream, gemm):
    """Event times (us) of all-reduces of `nbytes` on `comm_stream`, with `gemm` (or None)."""
    with torch.cuda.stream(comm_stream):
        buf = torch.ones(nbytes // 4, device="cuda", dtype=torch.float32)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
    comm_stream.synchronize()
    dist.barrier()
    times = []
    for i in range(args.warmup + args.samples):
        if gemm is not None:
            gemm.top_up()
        with torch.cuda.stream(comm_stream):
            start.record()
            dist.all_reduce(buf, op=reduce_op(dist), async_op=False)
            end.record()
        end.synchronize()
        if i >= args.warmup:
            times.append(start.elapsed_time(end) * 1e3)
    tflops = gemm.drain() if gemm is not None else None
    return times, tflops


def worker(local_rank, world, rank, args, port):
    import torch
    import torch.distributed as dist
    try:
        import greenctx
    except ImportError as e:
        fail(3, f"needs the greenctx module (pip install . in the repository; import failed: {e})")
    os.environ.setdefault("NCCL_NVLS_ENABLE", "0")
    if port is not None:
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ["MASTER_PORT"] = str(port)
    torch.cuda.set_device(local_rank)
    dev = torch.device("cuda", local_rank)
    try:
        gpu = greenctx.Device(local_rank)
        parts = greenctx.PartitionSet.create(gpu, f"{args.comm_sms},rest")
    except greenctx.RequestError as e:
        fail(2, f"rank {rank}: cannot make the split {args.comm_sms},rest on GPU {local_rank}: {e}")
    except greenctx.UnsupportedError as e:
        fail(4, f"rank {rank}: the driver lacks a feature green contexts need: {e}")
    except greenctx.Error as e:
        fail(3 if "driver" in str(e) or "GPU" in str(e) else 5, f"rank {rank}: {e}")
    small_gc = parts[0].context.create_stream()  # keep these (and parts) while torch uses them
    rest_gc = parts[1].context.create_stream()
    fill_gc = parts[0].context.create_stream()  # fills the all-reduce's SMs for the check
    small = torch.cuda.ExternalStream(small_gc.handle, device=dev)
    rest = torch.cuda.ExternalStream(rest_gc.handle, device=dev)
    plain_comm = torch.cuda.Stream(device=dev)
    plain_gemm = torch.cuda.Stream(device=dev)
    try:
        dist.init_process_group("nccl", rank=rank, world_size=world, device_id=dev)
        confined = check_confinement(torch, dist, greenctx, rank, world, small, fill_gc)
        results = {}
        gemm_plain = GemmLoop(torch, plain_gemm, args.gemm_size, torch.bfloat16)
        gemm_rest = GemmLoop(torch, rest, args.gemm_size, torch.bfloat16)
        for mib in args.sizes:
            for name, stream, gemm in (("alone", plain_comm, None),
                                       ("shared", plain_comm, gemm_plain),
                                       ("partitioned", small, gemm_rest)):
                if gemm is not None:
                    gemm.restart()
                times, tflops = measure(torch, dist, args, mib << 20, stream, gemm)
                results[f"{mib}:{name}"] = {"us": times, "gemm_tflops": tflops}
        torch.cuda.synchronize()
        mine = {"rank": rank, "gpu": gpu.name, "pci_bus_id": gpu.pci_bus_id,
                "comm_sms": parts[0].obtained, "gemm_sms": parts[1].obtained,
                "confined": confined, "results": results}
        everyone = [None] * world
        dist.all_gather_object(everyone, mine)
        small_gc.synchronize()
        rest_gc.synchronize()
        dist.destroy_process_group()
    except greenctx.Error as e:
        fail(5, f"rank {rank}: CUDA error: {e}")
    except RuntimeError as e:  # torch's CUDA and NCCL errors
        fail(5, f"rank {rank}: CUDA or NCCL error in torch: {e}")
    if rank == 0:
        report(torch, args, world, everyone)
    del small, rest, gemm_rest  # streams before the green contexts that own them
    del small_gc, rest_gc, fill_gc
    del parts


def slowest(everyone, key, q):
    """The highest q-th percentile over the ranks' samples of `key` (every rank has samples:
    --samples is positive)."""
    values = [percentile(r["results"][key]["us"], q) for r in everyone]
    return max(v for v in values if v is not None)


def report(torch, args, world, everyone):
    nccl = torch.cuda.nccl.version()
    nccl = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
    print(f"{PROG}: {world} GPUs ({everyone[0]['gpu']}), torch {torch.__version__}, NCCL "
          f"{nccl}, all-reduce on "
          f"{everyone[0]['comm_sms']} SMs, GEMM on {everyone[0]['gemm_sms']}, "
          f"NCCL_NVLS_ENABLE={os.environ.get('NCCL_NVLS_ENABLE')}")
    if ONE_GPU_TEST:
        print(f"{PROG}: ONE-GPU TEST RUN (GREENCTX_COMM_ONE_GPU_TEST=1): an all-reduce over one GPU "
              f"communicates nothing; these numbers check the program and answer nothing")
    confined = {r["rank"]: r["confined"] for r in everyone}
    outside = [r for r, c in confined.items() if c is False]
    unknown = [r for r, c in confined.items() if c is None]
    if outside:
        print(f"{PROG}: NOT CONFINED: with its SMs full, the all-reduce of rank(s) {outside} ended "
              f"anyway, so it ran on other SMs: the 'partitioned' rows do not confine NCCL")
    elif unknown:
        print(f"{PROG}: confinement not known for rank(s) {unknown} (the fill ended before the "
              f"all-reduce was launched)")
    else:
        print(f"{PROG}: confined: with one rank's {everyone[0]['comm_sms']} SMs at a time full, "
              f"the all-reduce waited for them every time")
    summary = []
    print(f"\n{'size':>8} {'scenario':<12} {'p50 us':>9} {'p99 us':>9} {'busbw GB/s':>10} "
          f"{'GEMM TFLOP/s':>12}")
    for mib in args.sizes:
        for name in ("alone", "shared", "partitioned"):
            key = f"{mib}:{name}"
            p50, p99 = slowest(everyone, key, 50), slowest(everyone, key, 99)
            busbw = (mib << 20) / (p50 * 1e-6) / 1e9 * 2 * (world - 1) / world
            tf = [r["results"][key]["gemm_tflops"] for r in everyone]
            gemm = sum(tf) / len(tf) if tf[0] is not None else None
            summary.append({"mib": mib, "scenario": name, "p50_us": p50, "p99_us": p99,
                            "busbw_gbs": busbw, "gemm_tflops": gemm})
            print(f"{str(mib) + ' MiB':>8} {name:<12} {p50:>9.1f} {p99:>9.1f} {busbw:>10.1f} "
                  f"{'-' if gemm is None else f'{gemm:.1f}':>12}")
    if args.json:
        info = {"tool": "examples/comm_overlap.py",
                "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                "torch": torch.__version__, "world": world, "args": vars(args),
                "one_gpu_test": ONE_GPU_TEST, "confined": confined,
                "env": {k: os.environ.get(k) for k in ("NCCL_NVLS_ENABLE", "NCCL_MAX_CTAS",
                                                       "CUDA_DEVICE_MAX_CONNECTIONS")},
                "summary": summary, "ranks": everyone}
        with open(args.json, "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
        print(f"samples of every rank written to {args.json}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = parse_args()
    try:
        import torch
        import torch.distributed as dist
        import torch.multiprocessing as mp
    except ImportError as e:
        fail(3, f"needs PyTorch with CUDA (import torch failed: {e})")
    if not torch.cuda.is_available():
        fail(3, f"no GPU: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no device")
    if not dist.is_nccl_available():
        fail(4, f"torch {torch.__version__} was built without NCCL")
    version = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])
    if version < (2, 8):
        print(f"{PROG}: warning: torch {torch.__version__} launches collectives on an internal "
              f"stream of the primary context (all SMs), not on the green context's stream: the "
              f"'partitioned' all-reduce is not confined (needs torch 2.8 or newer)",
              file=sys.stderr)
    if "RANK" in os.environ and "WORLD_SIZE" in os.environ:  # under torchrun
        world = int(os.environ["WORLD_SIZE"])
        if world < MIN_GPUS:
            fail(3, f"needs 2 GPUs or more: WORLD_SIZE is {world} (torchrun --nproc-per-node 2)")
        worker(int(os.environ.get("LOCAL_RANK", 0)), world, int(os.environ["RANK"]), args, None)
        return 0
    count = torch.cuda.device_count()
    world = args.nproc or count
    if count < MIN_GPUS or world > count:
        fail(3, f"needs 2 GPUs or more: torch sees {count}" +
                (f", --nproc asks {world}" if args.nproc else "") +
                "; an all-reduce over one GPU has nothing to overlap")
    port = free_port()
    try:
        mp.spawn(lambda_worker, args=(world, args, port), nprocs=world, join=True)
    except mp.ProcessExitedException as e:
        sys.exit(e.exit_code if e.exit_code and e.exit_code > 0 else 5)
    except mp.ProcessRaisedException as e:
        fail(5, f"a rank failed: {e}")
    return 0


def lambda_worker(local_rank, world, args, port):
    """mp.spawn's entry: one process per GPU, rank = GPU ordinal."""
    worker(local_rank, world, local_rank, args, port)


if __name__ == "__main__":
    sys.exit(main())
