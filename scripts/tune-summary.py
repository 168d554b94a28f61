#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Summarizes greenctx tune JSON files (scripts/tune-bench.sh): per file, the guided and the
exhaustive choice, the guided choice's background rate as a share of the exhaustive one's (target:
within 3%), the guided search's time as a share of the exhaustive one's (target: at most 35%),
the whole guided tune's time (target: at most 60 s), and whether runs of the same pair (files
named tune-PAIR-RUN.json) chose the same split or a neighbour. Reads both the report model's
records (schema 2) and the files greenctx tune wrote before it (schema 1)."""
import json
import os
import re
import sys


def normalized(doc):
    """The fields this summary reads, from a record (schema 2) or a schema 1 file."""
    if "tables" not in doc:
        rates = {p["critical_sms"]: p["background_rate"] for p in doc["curve"]}
        return {"guided": doc["guided"], "exhaustive": doc["exhaustive"],
                "candidates": doc["candidates"], "rates": rates,
                "unit": doc["background_unit"]}
    values = {k: v["value"] for k, v in doc["values"].items()}

    def answer(name):
        if name + "_seconds" not in values:
            return None
        return {"chosen": values[name + "_chosen_sms"], "seconds": values[name + "_seconds"]}

    curve = doc["tables"]["curve"]
    sizes = doc["config"]["sizes"]["value"]
    return {"guided": answer("guided"), "exhaustive": answer("exhaustive"),
            "candidates": [int(n) for n in sizes.split(",")],
            "rates": {r["critical_sms"]: r["background_rate"] for r in curve["rows"]},
            "unit": curve["fields"]["background_rate"].get("unit", "")}


def main(paths):
    rows, by_pair = [], {}
    for path in paths:
        with open(path) as f:
            doc = normalized(json.load(f))
        g, e = doc["guided"], doc["exhaustive"]
        if not g or not e:
            raise SystemExit(f"{path}: both searches are needed (greenctx tune --search both)")
        gr, er = doc["rates"].get(g["chosen"]), doc["rates"].get(e["chosen"])
        share = gr / er if gr is not None and er else None
        time_share = g["seconds"] / e["seconds"] if e["seconds"] else None
        name = os.path.basename(path)
        pair = re.sub(r"-\d+\.json$", "", name)
        by_pair.setdefault(pair, []).append((doc["candidates"], e["chosen"], g["chosen"]))
        rows.append((name, g["chosen"], e["chosen"], share, time_share, g["seconds"],
                     doc["unit"]))
    print("| file | guided | exhaustive | rate share | time share | guided s | met |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, gc, ec, share, ts, gs, _ in rows:
        met = (share is not None and share >= 0.97 and ts is not None and ts <= 0.35 and gs <= 60)
        print(f"| {name} | {gc} | {ec} | {share if share is None else f'{share:.3f}'} | "
              f"{ts if ts is None else f'{ts:.2f}'} | {gs:.1f} | {'yes' if met else 'no'} |")
    print()
    for pair, runs in sorted(by_pair.items()):
        chosen = [c for _, c, _ in runs]
        cands = runs[0][0]
        idx = [cands.index(c) for c in chosen if c in cands]
        agree = len(idx) == len(chosen) and max(idx) - min(idx) <= 1
        print(f"{pair}: exhaustive choices {chosen}, guided {[g for _, _, g in runs]}: "
              f"{'the same split or a neighbour' if agree else 'NOT the same or a neighbour'}")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit("usage: tune-summary.py TUNE.json...")
    main(sys.argv[1:])
