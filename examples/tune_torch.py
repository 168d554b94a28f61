#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Choose the split for a PyTorch decode/prefill pair by measurement (greenctx.tune).

The critical work is decode-like: one small matmul, a few tokens (--tokens, default 16) times a
hidden x hidden weight (--hidden, default 4096, --dtype bf16): it reads the whole weight for little
arithmetic, so it wants memory bandwidth and a few SMs. The background is prefill-like: a matmul of
--prefill-tokens (default 4096) times the same hidden size, counted in TFLOP/s. greenctx.tune runs
the critical work on N SMs and the background on the rest for each N this GPU makes, both
measured together, and answers the N that meets the objective (default: the critical p99 at most
1.5 times its p99 alone on the whole GPU) with the most background throughput.

Each workload is a Python callable that launches torch work on the greenctx stream it is given
(torch.cuda.ExternalStream of the stream's handle, made once per stream); it does not
synchronize. The background callable returns the FLOPs one launch does.

Each critical sample is held until the callable has enqueued all of it (hold_launch), so that
the tens of microseconds a torch call takes in Python, which vary from call to call and are the
same on every split, are not part of its time; --no-hold counts them.

--search both runs the guided search and the exhaustive one, and the report says how close the
guided one came and at what share of the time; --runs 2 does it all twice (do two runs agree?).
--json FILE writes a list with one dict per run (greenctx.tune's result as a dict, with the
configuration, kind "greenctx.tune-torch-example", schema 1);
with several runs FILE may hold "{run}", replaced by the run's number, to write one file per run
(what scripts/tune-summary.py reads).

Usage:
  python examples/tune_torch.py [--search guided|exhaustive|both] [--runs 1] [--p99-times-alone
                                 1.5 | --p99-us US | --within-best F] [--no-hold] [--json FILE]
                                 [--quiet]

Exit codes (as the greenctx CLI): 0 a split met the objective; 1 none did (what came closest is
printed); 2 bad arguments; 3 no PyTorch, no greenctx module, no NVIDIA driver or no GPU; 4 the
driver lacks a needed feature; 5 another CUDA error.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from typing import TYPE_CHECKING, Any

from example_support import (exit_codes, nvidia_driver_version, open_gpu, positive_float,
                             positive_int)

PROG = "tune_torch"

if TYPE_CHECKING:  # imported in main, once open_gpu has said whether it can be
    import greenctx


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--device", type=int, default=0, help="GPU ordinal (default 0)")
    p.add_argument("--tokens", type=positive_int, default=16,
                   help="decode tokens: rows of the critical matmul (default 16)")
    p.add_argument("--prefill-tokens", type=positive_int, default=4096,
                   help="prefill tokens: rows of the background matmul (default 4096)")
    p.add_argument("--hidden", type=positive_int, default=4096,
                   help="hidden size of both matmuls (default 4096)")
    p.add_argument("--dtype", choices=("bf16", "fp16", "fp32"), default="bf16")
    goal = p.add_mutually_exclusive_group()
    goal.add_argument("--p99-times-alone", type=positive_float,
                      help="objective: critical p99 at most X times its p99 alone (default 1.5)")
    goal.add_argument("--p99-us", type=positive_float,
                      help="objective: critical p99 at most US microseconds")
    goal.add_argument("--within-best", type=positive_float,
                      help="objective: the smallest critical partition within F of the best p99")
    p.add_argument("--search", choices=("guided", "exhaustive", "both"), default="guided")
    p.add_argument("--runs", type=positive_int, default=1, help="tunes to run (default 1)")
    p.add_argument("--samples", type=positive_int, default=300,
                   help="samples per split while searching (default 300)")
    p.add_argument("--confirm-samples", type=positive_int, default=1000,
                   help="samples for the chosen split and its neighbours (default 1000)")
    p.add_argument("--no-hold", action="store_true",
                   help="count each decode launch's time in Python too (default: each sample is "
                        "held until the callable has enqueued it, so only device time counts)")
    p.add_argument("--json", metavar="FILE", help="write the result(s) as JSON")
    p.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    return p.parse_args(argv)


def objective(args: argparse.Namespace) -> tuple[float | None, float | None, float | None]:
    """tune's (p99_us, p99_times_alone, within_best): the one given, else p99_times_alone 1.5."""
    if args.p99_us is None and args.within_best is None:
        return None, args.p99_times_alone or 1.5, None
    return args.p99_us, None, args.within_best


class TorchStreams:
    """torch.cuda.ExternalStream for each greenctx stream handle, made once per handle."""

    def __init__(self, torch: Any, device: int) -> None:
        self.torch, self.device = torch, device
        self.streams: dict[int, Any] = {}

    def __call__(self, ref: greenctx.StreamRef) -> Any:
        handle = ref.handle
        s = self.streams.get(handle)
        if s is None:
            s = self.torch.cuda.ExternalStream(handle, device=self.device)
            self.streams[handle] = s
        return s


def workloads(torch: Any, args: argparse.Namespace
              ) -> tuple[greenctx.CriticalWorkload, greenctx.BackgroundWorkload]:
    """The decode-like critical workload and the prefill-like background, as greenctx workloads."""
    import greenctx
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[args.dtype]
    h = args.hidden
    weight = torch.randn(h, h, device="cuda", dtype=dtype)
    x = torch.randn(args.tokens, h, device="cuda", dtype=dtype)
    y = torch.empty(args.tokens, h, device="cuda", dtype=dtype)
    px = torch.randn(args.prefill_tokens, h, device="cuda", dtype=dtype)
    py = torch.empty(args.prefill_tokens, h, device="cuda", dtype=dtype)
    torch.matmul(x, weight, out=y)  # warm-up: handle, workspace, kernel choice
    torch.matmul(px, weight, out=py)
    torch.cuda.synchronize()
    streams = TorchStreams(torch, args.device)
    prefill_flops = 2.0 * args.prefill_tokens * h * h

    def decode(ref: greenctx.StreamRef) -> None:
        with torch.cuda.stream(streams(ref)):
            torch.matmul(x, weight, out=y)

    def prefill(ref: greenctx.StreamRef) -> float:
        with torch.cuda.stream(streams(ref)):
            torch.matmul(px, weight, out=py)
        return prefill_flops

    critical = greenctx.CriticalWorkload(decode, name=f"decode {args.tokens}x{h}x{h} {args.dtype}")
    background = greenctx.BackgroundWorkload(
        prefill, name=f"prefill {args.prefill_tokens}x{h}x{h} {args.dtype}", unit="TFLOP/s",
        unit_scale=1e12)
    return critical, background


def describe(r: greenctx.TuneResult) -> str:
    lines = [f"objective: {r.objective}",
             f"critical alone on the whole GPU: p99 {r.alone.p99:.1f} us"]
    lines.append(f"{'split':>9} {'p50 us':>8} {'p99 us':>8} {'TFLOP/s':>9}")
    for p in r.curve:
        mark = "  <- chosen" if r.split == f"{p.critical_sms},rest" else ""
        lines.append(f"{str(p.critical_sms) + ',rest':>9} {p.critical.p50:8.1f} "
                     f"{p.critical.p99:8.1f} {p.background_rate:9.1f}{mark}")
    for name, a in (("guided", r.guided), ("exhaustive", r.exhaustive)):
        if a:
            lines.append(f"{name}: {len(a.measured)} measurements, {a.seconds:.1f} s: "
                         f"{a.reason}")
    g, e = r.guided, r.exhaustive
    if g and e and g.chosen and e.chosen:
        rate = {p.critical_sms: p.background_rate for p in r.curve}
        share = rate[g.chosen] / rate[e.chosen]
        lines.append(f"guided against exhaustive: {g.chosen} SMs against {e.chosen}, "
                     f"background rate {share:.3f} of the exhaustive choice's, in "
                     f"{g.seconds / e.seconds:.2f} of its time")
    if r.repeat:
        lines.append(f"measured again: {r.repeat.critical_sms} SMs, critical p99 "
                     f"{r.repeat.critical.p99:.1f} us, "
                     f"{'meets' if r.repeat_meets else 'does NOT meet'} the objective again")
    lines.append(f"use: {r.split}" if r.split else f"no split meets it: {r.reason}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    torch, driver, gpu = open_gpu(PROG, args.device)
    import greenctx  # open_gpu has imported it, or exited saying why it cannot be

    with exit_codes(PROG):
        critical, background = workloads(torch, args)
        progress = None if args.quiet else (lambda line: print(f"  {line}", file=sys.stderr))
        config = {"tokens": args.tokens, "prefill_tokens": args.prefill_tokens,
                  "hidden": args.hidden, "dtype": args.dtype, "search": args.search,
                  "samples": args.samples, "confirm_samples": args.confirm_samples,
                  "hold_launch": not args.no_hold, "gpu": torch.cuda.get_device_name(args.device),
                  "driver": {"nvidia": nvidia_driver_version(),
                             "cuda": greenctx.format_cuda_version(driver.version)},
                  "torch": torch.__version__, "command": " ".join([PROG] + argv),
                  "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        results: list[dict[str, Any]] = []
        met = True
        p99_us, p99_times_alone, within_best = objective(args)
        for run in range(1, args.runs + 1):
            started = time.perf_counter()
            r = greenctx.tune(gpu, critical, background, search=args.search,
                              samples=args.samples, confirm_samples=args.confirm_samples,
                              hold_launch=not args.no_hold, progress=progress, p99_us=p99_us,
                              p99_times_alone=p99_times_alone, within_best=within_best)
            seconds = time.perf_counter() - started
            # greenctx.tune's result as a dict (scripts/tune-summary.py reads it), marked as this
            # example's.
            doc = dataclasses.asdict(r)
            doc.update(wall_seconds=seconds, kind="greenctx.tune-torch-example", schema=1,
                       run=run, config=config)
            print(f"run {run} of {args.runs} ({seconds:.1f} s):\n{describe(r)}\n")
            met = met and r.split is not None
            results.append(doc)
    if args.json:
        if "{run}" in args.json:
            for doc in results:
                with open(args.json.replace("{run}", str(doc["run"])), "w") as f:
                    json.dump(doc, f, indent=1)
        else:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
