#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Tables of where a critical kernel's time goes beside a background, from `greenctx bench --json`
records (scripts/isolation-check.sh writes them), as markdown.

Per record: the critical kernel's host and GPU p50/p99 alone in its green context ("alone") and
beside the background in the complementary one ("beside"), split into the start delay (GPU time
less the kernel's own execution), the kernel's own run, and the host's part (host time less GPU
time: the launch call and seeing the completion); isolation, host p99 beside / host p99 alone,
with a 95% bootstrap interval, and the same with the critical stream at the highest priority
beside the background (green_priority, which bench's isolation target judges); and the A/A
spread: the same ratio between two halves of the alone samples (odd against even rounds), and
the 95% range of that ratio when both sides are drawn from the alone samples alone, which is how
far a ratio of two p99s of this many samples moves with no difference at all.

  python3 scripts/isolation-summary.py RECORD.json...
"""
import json
import random
import sys
from pathlib import Path

RESAMPLES = 1000  # as the library's p99_ratio_noise, which sets bench's isolation limit


def quantile(values, q):
    """Linear interpolation between order statistics (numpy's default); values sorted."""
    pos = q * (len(values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (pos - lo)


def p(values, q):
    return quantile(sorted(values), q)


def bootstrap_ratio(a, b, rng, q=0.99):
    """95% interval of p_q(a*) / p_q(b*) over resamples of a and b."""
    ratios = sorted(p(rng.choices(a, k=len(a)), q) / p(rng.choices(b, k=len(b)), q)
                    for _ in range(RESAMPLES))
    return quantile(ratios, 0.025), quantile(ratios, 0.975)


def config_value(doc, key):
    entry = doc["config"].get(key)
    return entry["value"] if isinstance(entry, dict) else entry


def label(path, doc):
    env = doc["environment"]
    conn = env.get("max_connections", {})
    conn = conn.get("value") if isinstance(conn, dict) else conn
    return f"{Path(path).stem} (connections {conn})"


def series(doc):
    rows = doc["tables"]["samples"]["rows"]
    out = {}
    for r in rows:
        out.setdefault(r["placement"], []).append(r)
    return out


def column(rows, key):
    return [r[key] for r in rows if r.get(key) is not None]


def summarize(path, rng):
    doc = json.loads(Path(path).read_text())
    if doc.get("kind") != "greenctx.bench":
        raise SystemExit(f"{path}: not a greenctx bench record (kind {doc.get('kind')!r})")
    by = series(doc)
    alone, beside = by.get("alone_green"), by.get("green")
    if not alone or not beside:
        raise SystemExit(f"{path}: no alone_green and green placements")
    samples = config_value(doc, "samples")
    rounds = config_value(doc, "rounds")
    per_round = max(1, samples // rounds)
    parts = {}
    for name, rows in (("alone", alone), ("beside", beside), ("priority", by.get("green_priority"))):
        if not rows:
            continue
        host, gpu, delay = (column(rows, k) for k in ("host_us", "gpu_us", "start_delay_us"))
        own = [g - d for g, d in zip(gpu, delay)]
        hostpart = [h - g for h, g in zip(host, gpu)]
        parts[name] = {"host50": p(host, .5), "host99": p(host, .99), "gpu50": p(gpu, .5),
                       "gpu99": p(gpu, .99), "delay50": p(delay, .5), "delay99": p(delay, .99),
                       "own50": p(own, .5), "hostpart50": p(hostpart, .5),
                       "hostpart99": p(hostpart, .99)}
    a_host, b_host = column(alone, "host_us"), column(beside, "host_us")
    iso = p(b_host, .99) / p(a_host, .99)
    prio = by.get("green_priority")
    iso_priority = p(column(prio, "host_us"), .99) / p(a_host, .99) if prio else None
    iso_lo, iso_hi = bootstrap_ratio(b_host, a_host, rng)
    odd = [r["host_us"] for r in alone if (r["sample"] // per_round) % 2]
    even = [r["host_us"] for r in alone if not (r["sample"] // per_round) % 2]
    split_half = p(odd, .99) / p(even, .99) if odd and even else None
    aa_lo, aa_hi = bootstrap_ratio(a_host, a_host, rng)
    env = doc["environment"]
    clocks = [env.get(k, {}).get("value", "") if isinstance(env.get(k), dict) else env.get(k, "")
              for k in ("clocks_before", "clocks_after")]
    return {"label": label(path, doc), "samples": samples, "parts": parts, "isolation": iso,
            "iso_priority": iso_priority,
            "iso_ci": (iso_lo, iso_hi), "split_half": split_half, "aa": (aa_lo, aa_hi),
            "clocks": clocks}


def main(paths):
    if not paths:
        raise SystemExit(__doc__.strip().splitlines()[-1])
    rng = random.Random(2026)
    results = [summarize(path, rng) for path in paths]
    print("## Isolation: host p99 beside the background / alone in the same green context\n")
    print("| record | samples | isolation | its 95% interval | with priority | "
          "A/A: odd / even rounds | A/A 95% range |")
    print("| --- | ---: | ---: | --- | ---: | ---: | --- |")
    for r in results:
        half = f"{r['split_half']:.3f}" if r["split_half"] else "-"
        prio = f"{r['iso_priority']:.3f}" if r["iso_priority"] else "-"
        print(f"| {r['label']} | {r['samples']} | {r['isolation']:.3f} | "
              f"{r['iso_ci'][0]:.3f}-{r['iso_ci'][1]:.3f} | {prio} | {half} | "
              f"{r['aa'][0]:.3f}-{r['aa'][1]:.3f} |")
    print("\n## Where the time goes (us): alone -> beside (-> beside, critical stream at the "
          "highest priority)\n")
    print("| record | host p50 | host p99 | GPU p50 | start delay p50 | start delay p99 | "
          "own run p50 | host part p50 | host part p99 |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        cells = []
        for key in ("host50", "host99", "gpu50", "delay50", "delay99", "own50", "hostpart50",
                    "hostpart99"):
            cells.append(" -> ".join(f"{r['parts'][n][key]:.1f}"
                                     for n in ("alone", "beside", "priority") if n in r["parts"]))
        print(f"| {r['label']} | " + " | ".join(cells) + " |")
    print("\n## Clocks (read before and after each run)\n")
    for r in results:
        print(f"- {r['label']}: before {r['clocks'][0]}; after {r['clocks'][1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
