#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The summary of scripts/processes-bench.sh: a critical process beside a background process in
each placement, and the targets.

Reads samples.jsonl (one line per process: round, placement, process, exit, the program's JSON
line) and meta.json; writes processes.json and processes.md into OUT_DIR and prints the Markdown.
Per placement and process the number is the median over rounds (each round one process run):
the critical process's p50 and p99 latency (launch to completion, us) and the background's
finished blocks per second.

Targets, each a result, not a pass or fail of this script:
  1. with greenctx pieces the critical p99 within 1.05 of its p99 alone on its piece
  2. the background at least 0.95 of its SM share: its throughput beside the critical process on
     piece 1 over (its throughput alone on the whole GPU x 116 / 132)
  3. greenctx pieces at least as good at p99 as the best MPS-only placement (sharing, the
     active-thread percentage, a high-priority stream)
  and, with two critical processes, pieces against the percentage: the worse p99 of two alike,
  and the first one's p99 when the second one's kernels are larger than its piece.

Exit 0 written; 2 unreadable input.

    processes-summary.py SAMPLES META OUT_DIR
"""
import json
import statistics
import sys
from pathlib import Path

TITLES = {
    "alone": "critical alone, whole GPU (no MPS)",
    "bg-alone": "background alone, whole GPU (no MPS)",
    "timeslice": "both on the whole GPU, no MPS (time slicing)",
    "mps-alone": "critical alone, whole GPU, MPS",
    "piece-alone": "critical alone on piece 0 of 16,rest, MPS",
    "bg-piece-alone": "background alone on piece 1 of 16,rest, MPS",
    "mps-share": "both on the whole GPU, MPS",
    "mps-percentage": "MPS, background at 88% active threads",
    "mps-priority": "MPS, critical on a high-priority stream",
    "pieces": "greenctx pieces of 16,rest, MPS",
    "trap": "critical on piece 0, background unconfined, MPS (the trap)",
    "two-pieces": "two critical on pieces 0, 1 of 16,16,rest, background on 2, MPS",
    "two-percentage": "two critical on the whole GPU, background at 76%, MPS",
    "uneven-pieces": "two critical on pieces 0, 1 of 16,16,rest, the 2nd with 1024 blocks, MPS",
    "uneven-percentage": "two critical on the whole GPU, the 2nd with 1024 blocks, background "
                         "at 76%, MPS",
}
MPS_ONLY = ("mps-share", "mps-percentage", "mps-priority")


def med(values):
    return statistics.median(values) if values else None


def quartiles(values):
    if len(values) < 2:
        return (values[0], values[0]) if values else (None, None)
    q1, _, q3 = statistics.quantiles(sorted(values), n=4, method="inclusive")
    return q1, q3


def collect(samples):
    """{placement: {process: {field: [values over rounds]}}} of the successful runs."""
    out = {}
    for s in samples:
        r = s.get("result")
        if s.get("exit") != 0 or not isinstance(r, dict):
            continue
        slot = out.setdefault(s["placement"], {}).setdefault(s["process"], {})
        for k in ("p50_us", "p99_us", "max_us", "blocks_per_s", "sms"):
            if isinstance(r.get(k), (int, float)):
                slot.setdefault(k, []).append(float(r[k]))
    return out


def summarize(samples):
    data = collect(samples)
    table = {}
    for name in TITLES:
        procs = data.get(name, {})
        row = {}
        for proc, fields in procs.items():
            row[proc] = {k: med(v) for k, v in fields.items()}
            row[proc]["rounds"] = max(len(v) for v in fields.values())
            if "p99_us" in fields:
                row[proc]["p99_q1"], row[proc]["p99_q3"] = quartiles(fields["p99_us"])
        table[name] = row

    def get(name, proc, field):
        return table.get(name, {}).get(proc, {}).get(field)

    targets = {}
    p99 = get("pieces", "critical1", "p99_us")
    alone = get("piece-alone", "critical1", "p99_us")
    if p99 and alone:
        targets["critical_p99_vs_alone"] = {
            "value": p99 / alone, "target": "<= 1.05", "met": p99 / alone <= 1.05,
            "text": f"critical p99 on its piece beside the background {p99:.1f} us, alone on it "
                    f"{alone:.1f} us: x{p99 / alone:.3f} (target at most 1.05)"}
    bg = get("pieces", "background", "blocks_per_s")
    bg_all = get("bg-alone", "background", "blocks_per_s")
    bg_sms, all_sms = get("pieces", "background", "sms"), get("bg-alone", "background", "sms")
    if bg and bg_all and bg_sms and all_sms:
        share = bg_sms / all_sms
        v = bg / (bg_all * share)
        targets["background_share"] = {
            "value": v, "target": ">= 0.95", "met": v >= 0.95,
            "text": f"background on piece 1 ({bg_sms:.0f} SMs) beside the critical process: "
                    f"{bg:.0f} blocks/s, {v:.3f} of its SM share ({share:.3f}) of its {bg_all:.0f} "
                    "blocks/s alone on the whole GPU (target at least 0.95)"}
    best = [(get(n, "critical1", "p99_us"), n) for n in MPS_ONLY if get(n, "critical1", "p99_us")]
    def overlapping(a, b):
        """Whether two placements' p99 quartile ranges over rounds overlap: no difference the
        rounds can tell."""
        qa = (get(a[0], a[1], "p99_q1"), get(a[0], a[1], "p99_q3"))
        qb = (get(b[0], b[1], "p99_q1"), get(b[0], b[1], "p99_q3"))
        return None not in qa + qb and qa[0] <= qb[1] and qb[0] <= qa[1]

    if p99 and best:
        b, n = min(best)
        tie = overlapping(("pieces", "critical1"), (n, "critical1"))
        targets["pieces_vs_best_mps"] = {
            "value": p99 / b, "target": "<= 1.0", "met": p99 <= b, "within_spread": tie,
            "text": f"greenctx pieces p99 {p99:.1f} us against the best MPS-only placement "
                    f"({n}) {b:.1f} us: x{p99 / b:.3f} (target at most 1)"
                    + ("; the rounds' quartiles overlap: no difference the rounds can tell"
                       if tie else "")}
    two = [get("two-pieces", c, "p99_us") for c in ("critical1", "critical2")]
    two_pct = [get("two-percentage", c, "p99_us") for c in ("critical1", "critical2")]
    if all(two) and all(two_pct):
        w = "critical1" if two[0] >= two[1] else "critical2"
        wp = "critical1" if two_pct[0] >= two_pct[1] else "critical2"
        tie = overlapping(("two-pieces", w), ("two-percentage", wp))
        targets["two_critical"] = {
            "value": max(two) / max(two_pct), "target": "<= 1.0", "met": max(two) <= max(two_pct),
            "within_spread": tie,
            "text": f"two critical processes: the worse p99 on pieces {max(two):.1f} us, with the "
                    f"percentage {max(two_pct):.1f} us"
                    + ("; the rounds' quartiles overlap: no difference the rounds can tell"
                       if tie else "")}
    first = get("uneven-pieces", "critical1", "p99_us")
    first_pct = get("uneven-percentage", "critical1", "p99_us")
    if first and first_pct:
        tie = overlapping(("uneven-pieces", "critical1"), ("uneven-percentage", "critical1"))
        targets["uneven_critical"] = {
            "value": first / first_pct, "target": "<= 1.0", "met": first <= first_pct,
            "within_spread": tie,
            "text": f"two critical processes, the second one's kernels larger than its piece: "
                    f"the first one's p99 on pieces {first:.1f} us, with the percentage "
                    f"{first_pct:.1f} us"
                    + ("; the rounds' quartiles overlap: no difference the rounds can tell"
                       if tie else "")}
    return table, targets


def fmt(v, digits=1):
    return "–" if v is None else f"{v:.{digits}f}"


def markdown(meta, table, targets, failures):
    env, st = meta.get("environment", {}), meta.get("settings", {})
    lines = ["# A critical process beside a background process", "",
             f"- machine: {env.get('gpu', '?')}, driver {env.get('driver', '?')}; date "
             f"{env.get('date', '?')}; commit {env.get('commit', '?')}",
             f"- {st.get('rounds', '?')} rounds, placements rotated within each; critical: "
             f"{st.get('critical', '?')}, {st.get('critical_samples', '?')} launches a run, each "
             f"timed launch to completion; background: {st.get('background', '?')}",
             "- numbers: medians over rounds of each run's p50 / p99 (us) and the background's "
             "finished blocks per second", "",
             "| placement | critical p50 | critical p99 (rounds' quartiles) | 2nd critical p99 | "
             "background blocks/s | background SMs | rounds |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name, title in TITLES.items():
        row = table.get(name, {})
        c1, c2, bg = row.get("critical1", {}), row.get("critical2", {}), row.get("background", {})
        rounds = max([x.get("rounds", 0) for x in (c1, c2, bg)] or [0])
        spread = (f" ({fmt(c1.get('p99_q1'))}–{fmt(c1.get('p99_q3'))})"
                  if c1.get("p99_q1") is not None else "")
        lines.append(f"| {title} | {fmt(c1.get('p50_us'))} | {fmt(c1.get('p99_us'))}{spread} | "
                     f"{fmt(c2.get('p99_us'))} | {fmt(bg.get('blocks_per_s'), 0)} | "
                     f"{fmt(bg.get('sms'), 0)} | {rounds} |")
    lines += ["", "## Targets", ""]
    for t in targets.values():
        lines.append(f"- {'met' if t['met'] else 'MISSED'}: {t['text']}")
    if not targets:
        lines.append("- no target could be computed (runs missing)")
    if failures:
        lines += ["", "## Runs that gave no number", ""]
        lines += [f"- round {f['round']} {f['placement']} {f['process']} (exit {f['exit']})"
                  for f in failures]
    return "\n".join(lines) + "\n"


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    try:
        samples = [json.loads(l) for l in Path(argv[1]).read_text().splitlines() if l.strip()]
        meta = json.loads(Path(argv[2]).read_text())
    except (OSError, ValueError) as e:
        print(f"processes-summary: cannot read the input: {e}", file=sys.stderr)
        return 2
    table, targets = summarize(samples)
    failures = [{k: s.get(k) for k in ("round", "placement", "process", "exit")}
                for s in samples if s.get("exit") != 0 or not isinstance(s.get("result"), dict)]
    out = Path(argv[3])
    out.mkdir(parents=True, exist_ok=True)
    report = {"environment": meta.get("environment", {}), "settings": meta.get("settings", {}),
              "placements": table, "targets": targets, "failures": failures}
    (out / "processes.json").write_text(json.dumps(report, indent=2) + "\n")
    md = markdown(meta, table, targets, failures)
    (out / "processes.md").write_text(md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
