#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Keep a small, latency-critical PyTorch op responsive while a large GEMM loop fills the GPU.

The critical op is a small matmul (--critical-size, default 1024x1024, --dtype); the background is
a loop of large matmuls (--gemm-size, default 8192) kept queued on its own stream. The critical
op's latency is measured in four placements:

  alone        critical op on a plain torch stream (all SMs), no background
  alone-gc     critical op on the small green context (--critical-sms), no background: what the
               partition itself costs the op
  shared       background on a plain torch stream, critical op on another plain stream: no
               partitioning, the critical op waits for SMs held by the GEMM's blocks
  partitioned  background on the large green context ("rest"), critical op on the small one

Both green contexts come from one split (greenctx.PartitionSet.create(gpu, "16,rest")), so their
SMs are disjoint. The background must run on the complementary green context, not on a plain
stream: a green context reserves its SMs against other green contexts only, and work left in the
primary context (torch's own streams) still runs on them. Torch uses the green contexts through
torch.cuda.ExternalStream(stream.handle): torch launches from the primary context, current on this
thread, onto the green context's stream. No green context is ever made current (one may be current
to one thread at a time only).

Method. One thread. Before each sample the background queue is topped up to about 10 ms of GEMMs
(depth from the measured time of one GEMM on that stream), then the program sleeps a random
0..--gap-ms so that samples fall at random phases of the background kernels. A sample is:
perf_counter, record a start event, launch the critical op, record an end event, synchronize on
the end event, perf_counter. Two latencies are kept per sample: host (launch to completion seen by
the host, the number a serving loop sees; includes launch and synchronisation overhead) and
events (start to end event on the critical stream: from when the stream reached the op to when it
finished, so it includes the wait for SMs but not the host's overhead). --warmup samples are
dropped. p50 and p99 are nearest-rank percentiles of the kept samples. The background's
throughput (TFLOP/s, GEMMs completed over the scenario's wall time) is reported too, so the cost of
the partition to the background is visible.

Usage:
  python examples/torch_latency.py [--critical-sms 16] [--samples 1000] [--gemm-size 8192]
                                   [--json FILE]

Exit codes (as the greenctx CLI): 0 ok; 2 bad arguments or a split this GPU cannot make; 3 no
PyTorch, no greenctx module, no NVIDIA driver or no GPU; 4 the driver lacks a needed feature;
5 another CUDA error.
"""
import argparse
import datetime
import functools
import json
import os
import platform
import random
import sys
import time

from example_support import (GemmLoop, fail as fail_as, nvidia_driver_version, open_gpu,
                             percentile)

PROG = "torch_latency"


fail = functools.partial(fail_as, PROG)


def parse_args():
    p = argparse.ArgumentParser(
        prog="torch_latency.py",
        description="Latency of a small critical PyTorch op while a large GEMM loop runs: alone, "
                    "shared without partitioning, and with green-context partitions.")
    p.add_argument("--critical-sms", type=int, default=16,
                   help="SMs of the critical op's green context; the background gets the rest "
                        "(default 16)")
    p.add_argument("--samples", type=int, default=1000, help="samples per scenario (default 1000)")
    p.add_argument("--warmup", type=int, default=20,
                   help="samples dropped at the start of each scenario (default 20)")
    p.add_argument("--gemm-size", type=int, default=8192,
                   help="N of the background's NxN @ NxN matmul (default 8192)")
    p.add_argument("--critical-size", type=int, default=1024,
                   help="N of the critical NxN @ NxN matmul (default 1024)")
    p.add_argument("--dtype", choices=["bf16", "fp16", "fp32"], default="bf16",
                   help="element type of both matmuls (default bf16)")
    p.add_argument("--gap-ms", type=float, default=1.0,
                   help="random sleep of 0..GAP ms before each sample (default 1)")
    p.add_argument("--device", type=int, default=0, help="GPU ordinal (default 0)")
    p.add_argument("--seed", type=int, default=6, help="seed of the gaps and data (default 6)")
    p.add_argument("--json", metavar="FILE",
                   help="write the raw samples, p50/p99 and the environment to FILE")
    args = p.parse_args()
    if args.critical_sms < 1:
        p.error("--critical-sms must be at least 1")
    if args.samples < 1 or args.warmup < 0:
        p.error("--samples must be at least 1 and --warmup at least 0")
    if args.gemm_size < 64 or args.critical_size < 1:
        p.error("--gemm-size must be at least 64 and --critical-size at least 1")
    if args.gap_ms < 0:
        p.error("--gap-ms must not be negative")
    return args


def run_scenario(torch, args, critical_stream, background, rng):
    """Samples of the critical op on `critical_stream`, with `background` (or None) running."""
    n = args.critical_size
    dtype = DTYPES[args.dtype](torch)
    with torch.cuda.stream(critical_stream):
        x = torch.randn(n, n, device="cuda", dtype=dtype)
        y = torch.randn(n, n, device="cuda", dtype=dtype)
        z = torch.empty(n, n, device="cuda", dtype=dtype)
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
    end.record(critical_stream)
    end.synchronize()
    host_us, event_us = [], []
    for i in range(args.warmup + args.samples):
        if background is not None:
            background.top_up()
        if args.gap_ms > 0:
            time.sleep(rng.uniform(0, args.gap_ms) / 1000)
        t0 = time.perf_counter()
        with torch.cuda.stream(critical_stream):
            start.record()
            torch.matmul(x, y, out=z)
            end.record()
        end.synchronize()
        t1 = time.perf_counter()
        if i >= args.warmup:
            host_us.append((t1 - t0) * 1e6)
            event_us.append(start.elapsed_time(end) * 1e3)
    tflops = background.drain() if background is not None else None
    return {
        "host_us": host_us,
        "event_us": event_us,
        "host_p50_us": percentile(host_us, 50),
        "host_p99_us": percentile(host_us, 99),
        "event_p50_us": percentile(event_us, 50),
        "event_p99_us": percentile(event_us, 99),
        "background_tflops": tflops,
        "background_gemms": background.completed if background is not None else 0,
    }


DTYPES = {"bf16": lambda t: t.bfloat16, "fp16": lambda t: t.float16, "fp32": lambda t: t.float32}


def main():
    args = parse_args()
    torch, driver, gpu = open_gpu(PROG, args.device)
    import greenctx  # open_gpu has imported it, or exited saying why it cannot be

    split = f"{args.critical_sms},rest"
    try:
        parts = greenctx.PartitionSet.create(gpu, split)  # once: green contexts are costly
    except greenctx.RequestError as e:
        fail(2, f"cannot make the split {split} on {gpu.name}: {e}")
    except greenctx.UnsupportedError as e:
        fail(4, f"the driver lacks a feature green contexts need: {e}")
    except greenctx.Error as e:
        fail(5, f"CUDA error while creating the split {split}: {e}")

    rng = random.Random(args.seed)
    torch.manual_seed(args.seed)
    dtype = DTYPES[args.dtype](torch)
    dev = torch.device("cuda", args.device)
    small_gc = parts[0].context.create_stream()  # greenctx streams: keep them while torch uses
    rest_gc = parts[1].context.create_stream()   # them (and the PartitionSet with them)
    small = torch.cuda.ExternalStream(small_gc.handle, device=dev)
    rest = torch.cuda.ExternalStream(rest_gc.handle, device=dev)
    plain_critical = torch.cuda.Stream(device=dev)
    plain_background = torch.cuda.Stream(device=dev)

    total_sms = gpu.sms().sm_count
    info = {
        "tool": "examples/torch_latency.py",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "gpu": {"name": gpu.name, "torch_name": torch.cuda.get_device_name(dev),
                "sm_count": total_sms, "compute_capability": list(gpu.compute_capability),
                "pci_bus_id": gpu.pci_bus_id},
        "driver": {"nvidia": nvidia_driver_version(),
                   "cuda": greenctx.format_cuda_version(driver.version)},
        "torch": {"version": torch.__version__, "cuda": torch.version.cuda},
        "greenctx": {"version": greenctx.__version__,
                     "toolkit": greenctx.format_cuda_version(greenctx.toolkit_version())},
        "python": platform.python_version(),
        "env": {"CUDA_DEVICE_MAX_CONNECTIONS": os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS")},
        "args": vars(args),
        "split": {"request": split, "critical_sms": parts[0].obtained,
                  "critical_rounding": parts[0].rounding, "background_sms": parts[1].obtained},
        "method": "host: perf_counter from before the launch to after the end event's "
                  "synchronize; events: start to end event on the critical stream; nearest-rank "
                  "percentiles; warm-up samples dropped",
    }

    print(f"{PROG}: {gpu.name}, {total_sms} SMs, driver {info['driver']['nvidia'] or '?'} "
          f"(CUDA {info['driver']['cuda']}), torch {torch.__version__}")
    print(f"split {split}: critical op on {parts[0].obtained} SMs, background on "
          f"{parts[1].obtained} SMs{' (' + parts[0].rounding + ')' if parts[0].rounding else ''}")

    try:
        bg_plain = GemmLoop(torch, plain_background, args.gemm_size, dtype)
        bg_gc = GemmLoop(torch, rest, args.gemm_size, dtype)
        info["background_gemm_ms"] = {"all_sms": bg_plain.gemm_ms, "rest_gc": bg_gc.gemm_ms}
        print(f"critical op: {args.critical_size}^3 {args.dtype} matmul; background: "
              f"{args.gemm_size}^3 {args.dtype} matmul, {bg_plain.gemm_ms:.2f} ms on all SMs, "
              f"{bg_gc.gemm_ms:.2f} ms on {parts[1].obtained}; {args.samples} samples each")
        scenarios = [
            ("alone", "plain stream (all SMs)", None, plain_critical, None),
            ("alone-gc", f"green context ({parts[0].obtained} SMs)", None, small, None),
            ("shared", "plain stream (all SMs)", "plain stream (all SMs)", plain_critical,
             bg_plain),
            ("partitioned", f"green context ({parts[0].obtained} SMs)",
             f"green context ({parts[1].obtained} SMs)", small, bg_gc),
        ]
        results = {}
        for name, crit_on, bg_on, stream, background in scenarios:
            r = run_scenario(torch, args, stream, background, rng)
            r.update({"critical_on": crit_on, "background_on": bg_on})
            results[name] = r
        small_gc.synchronize()
        rest_gc.synchronize()
        torch.cuda.synchronize()
    except greenctx.Error as e:
        fail(5, f"CUDA error: {e}")
    except RuntimeError as e:  # torch's CUDA errors
        fail(5, f"CUDA error in torch: {e}")
    info["scenarios"] = results

    print()
    print(f"{'scenario':<12} {'critical op on':<26} {'background on':<26} "
          f"{'p50 us':>8} {'p99 us':>8} {'ev p50':>8} {'ev p99':>8} {'bg TFLOP/s':>10}")
    for name, r in results.items():
        bg = f"{r['background_tflops']:.0f}" if r["background_tflops"] is not None else "-"
        print(f"{name:<12} {r['critical_on']:<26} {r['background_on'] or '-':<26} "
              f"{r['host_p50_us']:>8.1f} {r['host_p99_us']:>8.1f} {r['event_p50_us']:>8.1f} "
              f"{r['event_p99_us']:>8.1f} {bg:>10}")
    alone, shared, part = (results[k]["host_p99_us"] for k in ("alone", "shared", "partitioned"))
    print()
    print(f"p99 against alone: shared {shared / alone:.2f}x, partitioned {part / alone:.2f}x "
          f"(host latency, launch to completion)")

    if args.json:
        with open(args.json, "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
        print(f"raw samples and environment written to {args.json}")
    # Streams before the green contexts that own them (all work has finished above).
    del small, rest, bg_gc
    del small_gc, rest_gc
    del parts
    return 0


if __name__ == "__main__":
    sys.exit(main())
