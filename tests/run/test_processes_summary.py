#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""CPU test of scripts/processes-summary.py on hand-made samples with known answers: medians over
rounds per placement and process, the targets computed from them (met and missed), and the
runs that gave no number.

    test_processes_summary.py REPO_ROOT
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from summary_checks import Checks

# critical p99 per placement (us), before each round's offset; background blocks/s and SMs
P99 = {"alone": 70, "timeslice": 1800, "mps-alone": 70, "piece-alone": 60, "mps-share": 480,
       "mps-percentage": 64, "mps-priority": 260, "pieces": 62, "trap": 470, "two-pieces": 66,
       "two-percentage": 90, "uneven-pieces": 67, "uneven-percentage": 140}
BG = {"bg-alone": (100000, 132), "timeslice": (60000, 132), "bg-piece-alone": (88000, 116),
      "mps-share": (95000, 132), "mps-percentage": (86000, 132), "mps-priority": (94000, 132),
      "pieces": (86000, 116), "trap": (95000, 132), "two-pieces": (73000, 100),
      "two-percentage": (74000, 132), "uneven-pieces": (72000, 100),
      "uneven-percentage": (73000, 132)}
TWO = ("two-", "uneven-")  # placements with two critical processes
ROUNDS = 5


def samples():
    out = []
    for r in range(1, ROUNDS + 1):
        off = r - 3  # -2..2: the median is the base value
        for name, p99 in P99.items():
            for proc in ("critical1", "critical2") if name.startswith(TWO) else ("critical1",):
                res = {"role": "critical", "p50_us": p99 / 2 + off, "p99_us": p99 + off,
                       "max_us": p99 * 2, "sms": 16}
                out.append({"round": r, "placement": name, "process": proc, "exit": 0,
                            "result": res})
        for name, (bps, sms) in BG.items():
            if (r, name) == (2, "trap"):  # a failed run
                out.append({"round": r, "placement": name, "process": "background", "exit": 3,
                            "result": None})
                continue
            out.append({"round": r, "placement": name, "process": "background", "exit": 0,
                        "result": {"role": "background", "blocks_per_s": bps + 10 * off,
                                   "sms": sms}})
    return out


def main(argv):
    root = Path(argv[1])
    check = Checks("processes summary")

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples()))
        (tmp / "meta.json").write_text(json.dumps({"environment": {"gpu": "test"},
                                                   "settings": {"rounds": ROUNDS}}))
        p = subprocess.run([sys.executable, str(root / "scripts" / "processes-summary.py"),
                            str(tmp / "s.jsonl"), str(tmp / "meta.json"), str(tmp / "out")],
                           capture_output=True, text=True)
        check(p.returncode == 0, f"exit {p.returncode}: {p.stderr}")
        rep = json.loads((tmp / "out" / "processes.json").read_text())
        md = (tmp / "out" / "processes.md").read_text()

    pl, t = rep["placements"], rep["targets"]
    check(pl["pieces"]["critical1"]["p99_us"] == 62, f"pieces p99 {pl['pieces']}")
    check(pl["trap"]["background"]["rounds"] == ROUNDS - 1, "trap background rounds")
    check(abs(t["critical_p99_vs_alone"]["value"] - 62 / 60) < 1e-9, "p99 vs alone")
    check(t["critical_p99_vs_alone"]["met"] is True, "62/60 = 1.033 is within 1.05")
    # 86000 blocks/s on 116 of 132 SMs against 100000 alone: 86000 / 87878.8 = 0.9786
    check(abs(t["background_share"]["value"] - 86000 / (100000 * 116 / 132)) < 1e-9,
          "background share")
    check(t["background_share"]["met"] is True, "0.979 >= 0.95")
    # The best MPS-only p99 is the percentage's 64: pieces' 62 beat it.
    check(t["pieces_vs_best_mps"]["met"] is True and "mps-percentage" in
          t["pieces_vs_best_mps"]["text"], t["pieces_vs_best_mps"]["text"])
    check(t["two_critical"]["met"] is True, "two critical: 66 against 90")
    check(t["two_critical"]["within_spread"] is False, "66 and 90 are apart")
    check(t["uneven_critical"]["met"] is True and t["uneven_critical"]["within_spread"] is False,
          f"uneven: the first critical's 67 against 140: {t['uneven_critical']}")
    check(abs(t["uneven_critical"]["value"] - 67 / 140) < 1e-9, "uneven ratio")
    check(t["pieces_vs_best_mps"]["within_spread"] is True, "62 (61-63) and 64 (63-65) overlap")
    check(rep["failures"] == [{"round": 2, "placement": "trap", "process": "background",
                               "exit": 3}], f"failures {rep['failures']}")
    for text in ("| greenctx pieces of 16,rest, MPS | 31.0 | 62.0 (61.0–63.0) |", "met: critical p99",
                 "round 2 trap background (exit 3)"):
        check(text in md, f"processes.md lacks '{text}'")

    # A missed target reads MISSED.
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        worse = [dict(s) for s in samples()]
        for s in worse:
            if s["placement"] == "pieces" and s["process"] == "critical1":
                s["result"] = dict(s["result"], p99_us=90.0)
        (tmp / "s.jsonl").write_text("".join(json.dumps(s) + "\n" for s in worse))
        (tmp / "meta.json").write_text("{}")
        subprocess.run([sys.executable, str(root / "scripts" / "processes-summary.py"),
                        str(tmp / "s.jsonl"), str(tmp / "meta.json"), str(tmp / "out")],
                       capture_output=True, text=True)
        md = (tmp / "out" / "processes.md").read_text()
        check("MISSED: critical p99 on its piece beside the background 90.0 us" in md, md)

    return check.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
