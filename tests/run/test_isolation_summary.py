#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU test of scripts/isolation-summary.py on a hand-made bench record with known answers: the
isolation ratio (and the priority stream's), the split of the critical time into start delay, own
run and host part, the A/A split-half ratio of rounds that hold the same samples, the connections
and clocks it names; and the refusals of a record of another kind and of one without the green
placements.

    test_isolation_summary.py REPO_ROOT
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from summary_checks import Checks

SAMPLES, ROUNDS = 200, 10
PER_ROUND = SAMPLES // ROUNDS
# the start delay's base per placement (us); the kernel's own run is 10 us and the host's part 3
PLACEMENTS = {"alone_green": 2.0, "green": 4.0, "green_priority": 3.0}
OWN_US, HOST_PART_US = 10.0, 3.0


def delay_us(sample, base):
    # Every round holds the same values, so odd and even rounds have the same p99.
    return base + (sample % PER_ROUND) * 0.1


def host_us(sample, base):
    return delay_us(sample, base) + OWN_US + HOST_PART_US


def quantile(values, q):
    values = sorted(values)
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def record(kind="greenctx.bench", placements=PLACEMENTS):
    rows = []
    for name, base in placements.items():
        for i in range(SAMPLES):
            delay = delay_us(i, base)
            rows.append({"placement": name, "sample": i, "host_us": host_us(i, base),
                         "gpu_us": delay + OWN_US, "start_delay_us": delay})
    env = {"max_connections": {"value": "unset"},
           "clocks_before": {"value": "SM 1980 MHz"}, "clocks_after": {"value": "SM 1755 MHz"}}
    return {"kind": kind, "schema": 2, "environment": env,
            "config": {"samples": {"value": SAMPLES}, "rounds": {"value": ROUNDS}},
            "tables": {"samples": {"rows": rows}}}


def run(root, tmp, doc):
    path = tmp / "variant-base.json"
    path.write_text(json.dumps(doc))
    return subprocess.run([sys.executable, str(root / "scripts" / "isolation-summary.py"),
                           str(path)], capture_output=True, text=True)


def main(argv):
    root = Path(argv[1])
    check = Checks("isolation summary")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        p = run(root, tmp, record())
        check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
        out = p.stdout
        alone = [host_us(i, PLACEMENTS["alone_green"]) for i in range(SAMPLES)]
        beside = [host_us(i, PLACEMENTS["green"]) for i in range(SAMPLES)]
        iso = quantile(beside, 0.99) / quantile(alone, 0.99)
        row = next((line for line in out.splitlines()
                    if line.startswith("| variant-base (connections unset) | 200 |")), "")
        check(f"| {iso:.3f} |" in row, f"isolation {iso:.3f} not in '{row}'")
        prio = [host_us(i, PLACEMENTS["green_priority"]) for i in range(SAMPLES)]
        iso_prio = quantile(prio, 0.99) / quantile(alone, 0.99)
        check(f"| {iso_prio:.3f} |" in row, f"isolation with priority {iso_prio:.3f} not in '{row}'")
        check("| 1.000 |" in row, f"odd and even rounds alike give 1.000: '{row}'")
        timing = [line for line in out.splitlines()
                  if line.startswith("| variant-base") and "->" in line]
        check(len(timing) == 1, f"one timing row: {timing}")
        cells = [c.strip() for c in timing[0].split("|")[2:-1]] if timing else []
        # host p50, host p99, GPU p50, delay p50, delay p99, own run p50, host part p50, p99
        delay50 = [quantile([delay_us(i, b) for i in range(SAMPLES)], 0.5)
                   for b in PLACEMENTS.values()]
        expect = {3: " -> ".join(f"{d:.1f}" for d in delay50), 5: "10.0 -> 10.0 -> 10.0",
                  6: "3.0 -> 3.0 -> 3.0"}
        for index, text in expect.items():
            check(len(cells) > index and cells[index] == text,
                  f"column {index}: {cells[index] if len(cells) > index else None} != {text}")
        check("before SM 1980 MHz; after SM 1755 MHz" in out, "clocks")

        p = run(root, tmp, record(kind="greenctx.tune"))
        check(p.returncode != 0 and "not a greenctx bench record" in p.stderr,
              f"another kind: exit {p.returncode}, {p.stderr!r}")
        p = run(root, tmp, record(placements={"alone": 2.0}))
        check(p.returncode != 0 and "no alone_green and green placements" in p.stderr,
              f"no green placements: exit {p.returncode}, {p.stderr!r}")

    return check.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
