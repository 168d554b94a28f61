#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Move SMs to where the work is: a greenctx.Pool switches layouts as the load changes.

Two kinds of work share the GPU. A GEMM stream keeps large matmuls (--gemm-size, default 8192)
queued all the time. A latency-critical stream serves requests (a --critical-size matmul, default
2048) whose load changes every --phase-ms (default 100 ms): in "gemm" phases a request arrives
every --gap-ms (default 5 ms), in "burst" phases requests come back to back. The placements:

  none         both on plain torch streams (all SMs, no partition)
  static L     for each layout L of --layouts (default 16,rest 32,rest 64,rest): requests on L's
               first partition, GEMMs on its rest, for the whole run
  dynamic      the pool switches to --gemm-layout (default 16,rest) at the start of each gemm phase
               and to --burst-layout (default 64,rest) at the start of each burst phase; new work
               goes to the layout in use, work already queued finishes where it runs
  dynamic-lead the same, but it switches to the burst layout --lead-ms before each burst (default:
               the GEMM work queued plus one GEMM, so that the GEMMs queued on the wide layout have
               left the critical partition's SMs when the burst begins); the phases are a fixed
               schedule here, as a serving system's may be known from its queue

All layouts are made once (greenctx.Pool(gpu, layouts)): green contexts cost ~1.5 ms to create and
leak device memory when destroyed (driver 580), so the program never re-creates one; a switch is a
host-side store. Torch uses the pool's streams through torch.cuda.ExternalStream; no green context
is ever made current. GEMMs go to the complementary partition, never to a plain torch stream,
because work in the primary context would still run on the critical partition's SMs.

Method. One thread. The GEMM queue is topped up to about --queue-ms of work (depth from the
measured time of one GEMM) before each request, so a switch reaches the GEMMs within that time. A
request is: perf_counter, launch on the critical stream, synchronize on an event after it,
perf_counter (host latency, what a serving loop sees). p50 and p99 are nearest-rank percentiles
over all requests of a placement (and per phase kind). GEMM throughput is the GEMMs completed
(counted by events) times 2 N^3 over the placement's wall time. Every placement runs the same
phase pattern for --duration seconds after one untimed warm-up phase.

Usage:
  python examples/dynamic_partition.py [--quick] [--duration 2] [--json FILE] [--svg FILE]

Exit codes (as the greenctx CLI): 0 ok; 2 bad arguments or a layout this GPU cannot make; 3 no
PyTorch, no greenctx module, no NVIDIA driver or no GPU; 4 the driver lacks a needed feature;
5 another CUDA error.
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import datetime
import functools
import html
import json
import math
import platform
import sys
import time
from typing import Any

from example_support import fail as fail_as, percentile, open_gpu

PROG = "dynamic_partition"
DTYPES = {"bf16": lambda t: t.bfloat16, "fp16": lambda t: t.float16, "fp32": lambda t: t.float32}


fail = functools.partial(fail_as, PROG)


def parse_args():
    p = argparse.ArgumentParser(
        prog="dynamic_partition.py",
        description="GEMM throughput and critical-request latency under a load that changes "
                    "every phase: no partition, each static split, and a greenctx.Pool that "
                    "switches layouts with the phase.")
    p.add_argument("--layouts", default="16,rest;32,rest;64,rest",
                   help="the pool's layouts, ';'-separated, each N,rest (default "
                        "'16,rest;32,rest;64,rest')")
    p.add_argument("--gemm-layout", default="16,rest",
                   help="layout in use during gemm phases (default 16,rest)")
    p.add_argument("--burst-layout", default="64,rest",
                   help="layout in use during burst phases (default 64,rest)")
    p.add_argument("--phase-ms", type=float, default=100.0, help="phase length (default 100)")
    p.add_argument("--duration", type=float, default=2.0,
                   help="seconds measured per placement (default 2)")
    p.add_argument("--gap-ms", type=float, default=5.0,
                   help="time between requests in gemm phases (default 5)")
    p.add_argument("--queue-ms", type=float, default=4.0,
                   help="GEMM work kept queued (default 4)")
    p.add_argument("--lead-ms", type=float, default=None,
                   help="dynamic-lead: switch this long before each burst (default: the GEMM "
                        "queue's work plus one GEMM, measured)")
    p.add_argument("--gemm-size", type=int, default=8192, help="N of the GEMMs (default 8192)")
    p.add_argument("--critical-size", type=int, default=2048,
                   help="N of the critical matmul (default 2048)")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16",
                   help="element type (default bf16)")
    p.add_argument("--device", type=int, default=0, help="GPU ordinal (default 0)")
    p.add_argument("--quick", action="store_true",
                   help="a short run for checks: 0.6 s per placement, 4096 GEMMs")
    p.add_argument("--json", metavar="FILE", help="write results, samples and environment")
    p.add_argument("--svg", metavar="FILE", help="write a chart of the results")
    args = p.parse_args()
    if args.quick:
        args.duration = min(args.duration, 0.6)
        args.gemm_size = min(args.gemm_size, 4096)
    args.layout_list = [s.strip() for s in args.layouts.split(";") if s.strip()]
    if not args.layout_list:
        p.error("--layouts is empty: give layouts such as '16,rest;64,rest'")
    for name in ("gemm_layout", "burst_layout"):
        if getattr(args, name) not in args.layout_list:
            p.error(f"--{name.replace('_', '-')} {getattr(args, name)!r} is not one of --layouts "
                    f"{args.layout_list}")
    for layout in args.layout_list:
        items = [i.strip() for i in layout.split(",")]
        if len(items) != 2 or items[1] != "rest" or not items[0].isdigit():
            p.error(f"layout {layout!r}: each layout must be N,rest (critical partition, GEMMs "
                    f"on the rest)")
    if args.phase_ms <= 0 or args.duration <= 0 or args.gap_ms <= 0 or args.queue_ms <= 0:
        p.error("--phase-ms, --duration, --gap-ms and --queue-ms must be positive")
    if args.lead_ms is not None and not 0 <= args.lead_ms < args.phase_ms:
        p.error("--lead-ms must be at least 0 and shorter than --phase-ms")
    if args.duration * 1000 < 2 * args.phase_ms:
        p.error("--duration must cover at least two phases (one of each kind)")
    if args.gemm_size < 64 or args.critical_size < 1:
        p.error("--gemm-size must be at least 64 and --critical-size at least 1")
    return args


class GemmQueue:
    """Keeps about `queue_ms` of NxN matmuls queued on the stream it is given each time."""

    def __init__(self, torch, size, dtype, queue_ms, gemm_ms):
        self.torch = torch
        self.a = torch.randn(size, size, device="cuda", dtype=dtype)
        self.b = torch.randn(size, size, device="cuda", dtype=dtype)
        # One output per stream: queued GEMMs of two layouts never share one.
        self.out: dict[int, Any] = {}
        self.flops = 2.0 * size ** 3
        self.depth = min(64, max(1, math.ceil(queue_ms / max(gemm_ms, 1e-3))))
        self.pending: collections.deque[Any] = collections.deque()  # torch.cuda.Event
        self.completed = 0

    def top_up(self, stream):
        torch = self.torch
        while self.pending and self.pending[0].query():
            self.pending.popleft()
            self.completed += 1
        while len(self.pending) < self.depth:
            with torch.cuda.stream(stream):
                c = self.out.get(stream.cuda_stream)
                if c is None:
                    c = self.out[stream.cuda_stream] = torch.empty_like(self.a)
                torch.matmul(self.a, self.b, out=c)
                done = torch.cuda.Event()
                done.record()
            self.pending.append(done)

    def finish(self):
        while self.pending:
            self.pending.popleft().synchronize()
            self.completed += 1


def time_gemm(torch, stream, a, b, out, count=3):
    """ms per matmul on `stream` after a warm-up one."""
    with torch.cuda.stream(stream):
        torch.matmul(a, b, out=out)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            torch.matmul(a, b, out=out)
        end.record()
    end.synchronize()
    return start.elapsed_time(end) / count


def run_placement(torch, args, pool, placement, streams_of, dtype, gemm_inputs):
    """Runs the phase pattern once; streams_of(kind) -> (critical, gemm) torch streams;
    gemm_inputs: (a, b, out) to time one GEMM with."""
    n = args.critical_size
    x = torch.randn(n, n, device="cuda", dtype=dtype)
    y = torch.randn(n, n, device="cuda", dtype=dtype)
    z: dict[int, Any] = {}  # the output per stream
    done = torch.cuda.Event()
    gemm_ms = time_gemm(torch, streams_of("gemm")[1], *gemm_inputs)
    queue = GemmQueue(torch, args.gemm_size, dtype, args.queue_ms, gemm_ms)
    phase_s = args.phase_ms / 1000
    lead_s = 0.0
    if placement == "dynamic-lead":
        lead_s = (args.lead_ms if args.lead_ms is not None
                  else (queue.depth + 1) * gemm_ms) / 1000

    def kind_at(t):
        return "gemm" if int((t - start) / phase_s) % 2 == 0 else "burst"

    warm_s = phase_s  # one untimed phase first
    latencies: dict[str, list[float]] = {"gemm": [], "burst": []}
    switch_us: list[float] = []
    switches = 0
    kind_now, layout_now = None, None
    start = time.perf_counter()
    measured_from, completed_at_start = None, 0
    end_at = start + warm_s + args.duration
    next_request = start
    while True:
        now = time.perf_counter()
        if now >= end_at:
            break
        if measured_from is None and now - start >= warm_s:
            measured_from, completed_at_start = now, queue.completed
            for v in latencies.values():
                v.clear()
            switch_us.clear()
        kind = kind_at(now)
        if placement.startswith("dynamic"):
            # dynamic-lead: the burst layout from lead_s before the burst on
            wanted = "burst" if kind == "burst" or kind_at(now + lead_s) == "burst" else "gemm"
            if wanted != layout_now:
                t0 = time.perf_counter()
                pool.switch(args.gemm_layout if wanted == "gemm" else args.burst_layout)
                switch_us.append((time.perf_counter() - t0) * 1e6)
                switches += 1
                layout_now = wanted
        if kind != kind_now:
            kind_now = kind
            next_request = now
        critical, gemm = streams_of(kind)
        queue.top_up(gemm)
        if kind == "gemm" and now < next_request:
            time.sleep(min(0.0002, next_request - now))
            continue
        t0 = time.perf_counter()
        with torch.cuda.stream(critical):
            out = z.get(critical.cuda_stream)
            if out is None:
                out = z[critical.cuda_stream] = torch.empty_like(x)
            torch.matmul(x, y, out=out)
            done.record()
        done.synchronize()
        latencies[kind].append((time.perf_counter() - t0) * 1e6)
        next_request = t0 + args.gap_ms / 1000
    queue.finish()
    assert measured_from is not None, "the run ended within its warm-up phase"
    seconds = time.perf_counter() - measured_from
    everything = latencies["gemm"] + latencies["burst"]
    return {
        "gemm_tflops": (queue.completed - completed_at_start) * queue.flops / seconds / 1e12,
        "gemms": queue.completed - completed_at_start,
        "gemm_queue_depth": queue.depth,
        "seconds": seconds,
        "requests": len(everything),
        "critical_p50_us": percentile(everything, 50),
        "critical_p99_us": percentile(everything, 99),
        "by_phase": {k: {"requests": len(v), "p50_us": percentile(v, 50),
                         "p99_us": percentile(v, 99)} for k, v in latencies.items()},
        "switches": switches,
        "lead_ms": lead_s * 1000,
        "switch_host_us_p50": percentile(switch_us, 50),
        "critical_host_us": everything,
    }


def svg_chart(results, title):
    """Two bar panels, one per metric, by hand (no plotting dependency)."""
    names = list(results)
    panels = [("GEMM throughput (TFLOP/s, higher is better)", "gemm_tflops", "#4a7fb5"),
              ("critical request p99 (us, lower is better)", "critical_p99_us", "#c0504d")]
    bar_h, gap, left, width = 22, 8, 150, 360
    panel_h = len(names) * (bar_h + gap) + 40
    height = 50 + 2 * panel_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 90}" '
           f'height="{height}" font-family="sans-serif" font-size="12">',
           f'<text x="10" y="22" font-size="15" font-weight="bold">{html.escape(title)}</text>']
    for p, (label, key, colour) in enumerate(panels):
        top = 45 + p * panel_h
        out.append(f'<text x="10" y="{top + 12}" font-weight="bold">{html.escape(label)}</text>')
        values = [results[n][key] or 0.0 for n in names]
        scale = width / max(max(values), 1e-9)
        for i, (n, v) in enumerate(zip(names, values)):
            y = top + 25 + i * (bar_h + gap)
            fill = "#2e8b57" if n.startswith("dynamic") else colour
            out.append(f'<text x="{left - 8}" y="{y + 15}" text-anchor="end">'
                       f'{html.escape(n)}</text>')
            out.append(f'<rect x="{left}" y="{y}" width="{v * scale:.1f}" height="{bar_h}" '
                       f'fill="{fill}"/>')
            out.append(f'<text x="{left + v * scale + 5:.1f}" y="{y + 15}">{v:.1f}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    args = parse_args()
    torch, driver, gpu = open_gpu(PROG, args.device)
    import greenctx  # open_gpu has imported it, or exited saying why it cannot be

    try:
        pool = greenctx.Pool(gpu, args.layout_list)  # once: green contexts are costly
    except greenctx.RequestError as e:
        fail(2, f"cannot make the layouts {args.layout_list} on {gpu.name}: {e}")
    except greenctx.UnsupportedError as e:
        fail(4, f"the driver lacks a feature green contexts need: {e}")
    except greenctx.Error as e:
        fail(5, f"CUDA error while creating the pool: {e}")

    torch.manual_seed(6)
    dtype = DTYPES[args.dtype](torch)
    dev = torch.device("cuda", args.device)
    # The pool's streams as torch streams, per layout: (critical, gemm). Keep them (and the pool)
    # while torch uses them.
    torch_streams = {name: (pool.torch_streams(0, name)[0], pool.torch_streams(1, name)[0])
                     for name in pool.layouts}
    plain = (torch.cuda.Stream(device=dev), torch.cuda.Stream(device=dev))
    stats = pool.stats()
    sizes = {name: [p.sm_count for p in pool.partitions(name)] for name in pool.layouts}
    info: dict[str, Any] = {
        "tool": "examples/dynamic_partition.py",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": " ".join(sys.argv),
        "gpu": {"name": gpu.name, "sm_count": gpu.sms().sm_count,
                "pci_bus_id": gpu.pci_bus_id},
        "driver": {"cuda": greenctx.format_cuda_version(driver.version)},
        "torch": {"version": torch.__version__, "cuda": torch.version.cuda},
        "python": platform.python_version(),
        "args": {k: v for k, v in vars(args).items() if k != "layout_list"},
        "pool": {"layouts": sizes, "stats": dataclasses.asdict(stats)},
        "method": "host latency per request (launch to event synchronize), nearest-rank "
                  "percentiles; GEMM TFLOP/s from GEMMs completed over wall time; one untimed "
                  "warm-up phase per placement",
    }
    print(f"{PROG}: {gpu.name}, {gpu.sms().sm_count} SMs, driver CUDA "
          f"{info['driver']['cuda']}, torch {torch.__version__}")
    print(f"pool: {', '.join(f'{n} = {s}' for n, s in sizes.items())}: {stats.contexts} green "
          f"contexts, {stats.streams} streams, made in {stats.creation_ms:.1f} ms, "
          f"{stats.device_memory_bytes / 2**20:.1f} MiB")

    placements = {"none": lambda kind: plain}
    for name in pool.layouts:
        placements[f"static {name}"] = (lambda n: lambda kind: torch_streams[n])(name)
    placements["dynamic"] = lambda kind: torch_streams[pool.current]
    placements["dynamic-lead"] = lambda kind: torch_streams[pool.current]
    results = {}
    try:
        a = torch.randn(args.gemm_size, args.gemm_size, device="cuda", dtype=dtype)
        gemm_inputs = (a, torch.randn_like(a), torch.empty_like(a))
        for streams in [plain, *torch_streams.values()]:  # cuBLAS per stream, before timing
            for s in streams:
                time_gemm(torch, s, *gemm_inputs, count=1)
        for placement, streams_of in placements.items():
            if placement.startswith("static "):
                pool.switch(placement[len("static "):])
            elif placement.startswith("dynamic"):
                pool.switch(args.gemm_layout)
            results[placement] = run_placement(torch, args, pool, placement, streams_of, dtype,
                                               gemm_inputs)
            r = results[placement]
            print(f"  {placement:<16} GEMM {r['gemm_tflops']:7.1f} TFLOP/s   critical p50 "
                  f"{r['critical_p50_us']:8.1f} us  p99 {r['critical_p99_us']:8.1f} us  "
                  f"({r['requests']} requests)")
        for layout in pool.layouts:
            pool.synchronize(layout)
        torch.cuda.synchronize()
    except greenctx.Error as e:
        fail(5, f"CUDA error: {e}")
    except RuntimeError as e:  # torch's CUDA errors
        fail(5, f"CUDA error in torch: {e}")
    info["placements"] = results

    statics = {k: v for k, v in results.items() if k.startswith("static ")}
    best_p99 = min(statics, key=lambda k: statics[k]["critical_p99_us"])
    best_gemm = max(statics, key=lambda k: statics[k]["gemm_tflops"])
    info["best_static"] = {"critical_p99": best_p99, "gemm_tflops": best_gemm}
    print()
    print(f"{'placement':<16} {'GEMM TFLOP/s':>12} {'p50 us':>9} {'p99 us':>9} "
          f"{'gemm-phase p99':>15} {'burst-phase p99':>16} {'requests':>9}")
    for name, r in results.items():
        g, b = r["by_phase"]["gemm"]["p99_us"], r["by_phase"]["burst"]["p99_us"]
        print(f"{name:<16} {r['gemm_tflops']:>12.1f} {r['critical_p50_us']:>9.1f} "
              f"{r['critical_p99_us']:>9.1f} {g if g is not None else float('nan'):>15.1f} "
              f"{b if b is not None else float('nan'):>16.1f} {r['requests']:>9}")
    none = results["none"]
    print(f"\ndynamic-lead switched {results['dynamic-lead']['lead_ms']:.1f} ms before each burst")
    for dname in ("dynamic", "dynamic-lead"):
        dyn = results[dname]
        for label, ref in (("no partition", none), (f"best static for p99 ({best_p99})",
                                                     statics[best_p99]),
                           (f"best static for GEMMs ({best_gemm})", statics[best_gemm])):
            print(f"{dname} against {label}: GEMM "
                  f"{dyn['gemm_tflops'] / ref['gemm_tflops']:.2f}x, critical p99 "
                  f"{dyn['critical_p99_us'] / ref['critical_p99_us']:.2f}x")
    # Is a dynamic placement beaten on both counts (more GEMM throughput and a lower p99) by some
    # static split? If none beats it, it is a trade-off no static split offers.
    info["statics_better_on_both"] = {}
    for dname in ("dynamic", "dynamic-lead"):
        dyn = results[dname]
        better = [k for k, v in statics.items() if v["gemm_tflops"] > dyn["gemm_tflops"] and
                  v["critical_p99_us"] < dyn["critical_p99_us"]]
        info["statics_better_on_both"][dname] = better
        print(f"{dname}: " + (f"beaten on both counts by {', '.join(better)}" if better else
                              "no static split has both more GEMM throughput and a lower p99"))

    if args.json:
        with open(args.json, "w") as f:
            json.dump(info, f, indent=1)
            f.write("\n")
        print(f"results, samples and environment written to {args.json}")
    if args.svg:
        with open(args.svg, "w") as f:
            f.write(svg_chart(results, f"{PROG}: {gpu.name}, phases of {args.phase_ms:g} ms"))
        print(f"chart written to {args.svg}")
    # Torch's streams and cached blocks before the pool's streams and contexts go away.
    torch.cuda.synchronize()
    del torch_streams, placements
    torch.cuda.empty_cache()
    del pool
    return 0


if __name__ == "__main__":
    sys.exit(main())
