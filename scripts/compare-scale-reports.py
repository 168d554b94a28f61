#!/usr/bin/env python3
"""Compares `greenctx scale --from FILE` before and after the scale report moved to the report
model (issue 23): the same numbers must come out. For each saved run, BEFORE/N.txt and .csv are the
old renderings (aligned table; one CSV row per run) and AFTER/N.txt and .json the new (the record's
text; its JSON with the runs table). Checked: every point's median, min, max, rsd, wall, both
speed-ups and status as printed; every run's wall time, figure, exit code, signal, CUDA use,
confined GPUs and green contexts; the notes that were kept. Prints one line per file and exits 1
on any difference.

  scripts/compare-scale-reports.py BEFORE AFTER FILES.txt   (FILES.txt: "N path" per line)
"""
import csv
import json
import re
import sys


def old_rows(text):
    rows = []
    for line in text.splitlines():
        m = re.match(r"^\s*(\d+|unconfined)\s+(\S+)\s+(\S+) \.\. (\S+)\s+(\S+)%\s+(.*)$", line)
        if not m:
            m2 = re.match(r"^\s*(\d+|unconfined)\s+(-)\s+(-)\s+(\S+)\s+(.*)$", line)
            if m2:
                rows.append({"sms": m2.group(1), "median": "-", "min": "-", "max": "-",
                             "rsd": "-", "rest": m2.group(4) + " " + m2.group(5)})
            continue
        sms, med, lo, hi, rsd, rest = m.groups()
        rows.append({"sms": sms, "median": med, "min": lo, "max": hi, "rsd": rsd, "rest": rest})
    for r in rows:  # rest: [wall] vs_smallest vs_unconfined status...
        parts = r.pop("rest").split()
        nums = []
        while parts and re.match(r"^(-|[0-9.]+x?)$", parts[0]):
            nums.append(parts.pop(0).rstrip("x"))
        r["status"] = " ".join(parts)
        r["wall"] = nums[0] if len(nums) == 3 else None
        r["vs_smallest"], r["vs_unconfined"] = nums[-2], nums[-1]
    return rows


def new_rows(text):
    lines = text.splitlines()
    head = next(i for i, l in enumerate(lines) if l.strip().startswith("SMs "))
    names = re.split(r"\s{2,}", lines[head].strip())
    rows = []
    for line in lines[head + 1:]:
        if not line.strip():
            break
        cells = re.split(r"\s{2,}", line.strip())
        rows.append(dict(zip(names, cells)))
    out = []
    for r in rows:
        key = lambda p: next(k for k in r if k.startswith(p))
        out.append({"sms": r["SMs"], "median": r[key("median")], "min": r[key("min")],
                    "max": r[key("max")], "rsd": r[key("rsd")],
                    "wall": r[key("wall")] if any(k.startswith("wall") for k in r) else None,
                    "vs_smallest": r[next(k for k in r if k.startswith("vs ") and k != "vs unconfined")],
                    "vs_unconfined": r["vs unconfined"], "status": r["status"]})
    return out


def main():
    before, after, listing = sys.argv[1:4]
    bad = 0
    for line in open(listing):
        n, path = line.split()
        problems = []
        old_text, new_text = open(f"{before}/{n}.txt").read(), open(f"{after}/{n}.txt").read()
        o, w = old_rows(old_text), new_rows(new_text)
        if o != w:
            problems.append(f"points differ:\n  before {o}\n  after  {w}")
        runs = json.load(open(f"{after}/{n}.json"))["tables"]["runs"]["rows"]
        old_runs = list(csv.DictReader(open(f"{before}/{n}.csv")))
        if len(runs) != len(old_runs):
            problems.append(f"{len(old_runs)} runs before, {len(runs)} after")
        for a, b in zip(old_runs, runs):
            sms = "unconfined" if a["unconfined"] == "1" else int(a["sms"])
            same = (sms == b["sms"] and int(a["repeat"]) + 1 == b["repeat"]
                    and abs(float(a["wall_s"]) - b["wall_s"]) < 5e-7
                    and (a["figure"] == "" and b["figure"] is None
                         or a["figure"] != "" and float(a["figure"]) == b["figure"])
                    and int(a["exit_code"]) == b["exit_code"] and int(a["signal"]) == b["signal"]
                    and (a["cuda_used"] == "1") == (b["cuda_used"] == "yes")
                    and a["confined_devices"] == b["confined_devices"]
                    and int(a["green_contexts"]) == b["green_contexts"])
            if not same:
                problems.append(f"run differs: {a} against {b}")
        for note in ("unconfined: all", "figure: ", "wall: median", "warning: ", "note: at",
                     "FAILED: "):
            if (note in old_text) != (note in new_text):
                problems.append(f"note '{note}' {'lost' if note in old_text else 'new'}")
        print(f"{n} {path}: {'same numbers' if not problems else 'DIFFERENT'} "
              f"({len(o)} points, {len(runs)} runs)")
        for p in problems:
            print("  " + p)
        bad += bool(problems)
    sys.exit(1 if bad else 0)


main()
