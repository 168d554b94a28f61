#!/usr/bin/env python3
"""Where the PyTorch pair's noise comes from: the decode-like critical matmul of
examples/tune_torch.py timed with and without the hold (greenctx.measure_contention's
hold_launch), alone on the whole GPU and beside the prefill-like background on one split.

Without the hold a sample's device time runs from the event before the torch call, so it holds the
time the call takes in Python; with it, only the GPU's. Both are measured in alternation, --repeats
times each, so that a drift over time shows in both. Prints one line per measurement (p50, p90,
p99, max of the device time, and the host's launch-to-completion p50) and writes them to --json.

Usage: python3 scripts/torch-hold-compare.py [--split 32,rest] [--samples 1000] [--repeats 2]
                                             [--json FILE]
Exit codes as tune_torch.py's.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
import tune_torch  # noqa: E402  (its workloads and GPU opening)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--split", default="32,rest", help="critical SMs,rest (default 32,rest)")
    p.add_argument("--samples", type=tune_torch.positive_int, default=1000)
    p.add_argument("--repeats", type=tune_torch.positive_int, default=2)
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    work_args = tune_torch.parse_args(["--quiet"])
    torch, greenctx, driver, gpu = tune_torch.open_gpu("torch-hold-compare", work_args.device)
    try:
        critical, background = tune_torch.workloads(torch, greenctx, work_args)
        parts = greenctx.PartitionSet.create(gpu, args.split)
        rows = []
        for repeat in range(1, args.repeats + 1):
            for hold in (False, True):
                r = greenctx.measure_contention(gpu, parts, critical, background,
                                                samples=args.samples, rounds=2, gap_us=100,
                                                placements=["alone", "green"], hold_launch=hold)
                for pl in r["placements"]:
                    g, h = pl["critical"]["gpu"], pl["critical"]["host"]
                    row = {"repeat": repeat, "hold_launch": hold, "placement": pl["name"],
                           "critical_sms": r["device_sms"] if pl["name"] == "alone"
                           else r["critical_sms"],
                           "p50_us": g["p50"], "p90_us": g["p90"], "p99_us": g["p99"],
                           "max_us": g["max"], "host_p50_us": h["p50"],
                           "background_tflops": pl["background"]["rate"]
                           if pl["background"] else None}
                    rows.append(row)
                    print(f"repeat {repeat} hold {'on ' if hold else 'off'} {pl['name']:>5} on "
                          f"{row['critical_sms']:3d} SMs: p50 {g['p50']:7.1f} p90 {g['p90']:7.1f} "
                          f"p99 {g['p99']:7.1f} max {g['max']:8.1f} us; host p50 "
                          f"{h['p50']:7.1f} us", flush=True)
    except greenctx.RequestError as e:
        tune_torch.fail(2, str(e))
    except greenctx.Error as e:
        tune_torch.fail(5, str(e))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"kind": "greenctx.torch-hold-compare", "schema": 1,
                       "gpu": torch.cuda.get_device_name(work_args.device),
                       "driver": tune_torch.nvidia_driver_version(), "torch": torch.__version__,
                       "split": args.split, "samples": args.samples,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                       "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
