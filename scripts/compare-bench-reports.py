#!/usr/bin/env python3
"""Compares `greenctx bench [adaptive|comm] --from FILE` before and after bench moved to the report
model (issue 23): the same numbers must come out. For each saved run, BEFORE/N.json and N.csv are
what the old binary wrote (its own JSON layout: placements, configurations or points, with every
sample; its CSV) and AFTER/N.json, N.csv and N.txt what the new one writes (the record's JSON, its
CSV, its text). Checked, exactly unless said otherwise:
  latency  the configuration and split; every placement's host min, p50, p90, p99, max, noise, GPU
           p50, start delay p50 and p99, background rate, of full GPU, of SM share; every sample
           (host, GPU, start delay); the background alone (rates, work, seconds, of full, SM
           share, quantization); every target's value, limit, direction and met;
  adaptive the configuration and split; every configuration's host p50 and p99, GPU p50, wait p99
           (within 1e-9 relative: recomputed here), background GB/s; every sample and wait; the
           background alone on each partition; every verdict (isolation, of static, met);
  comm     the run's settings and GEMM alone; every point's samples, p50, p99, bus bandwidth, GEMM
           TFLOP/s, the SMs per GPU, confinement and failure; every all-reduce time; every answer
           (k, its mode and p50, the best mode and p50, the GEMM kept, its text);
  CSV      the same columns with the same values (the old CSV wrote samples to 3 decimals: equal
           within 0.0005; comm's new columns size and gemm_kept are not in the old one; the new
           one leaves alone's GEMM empty where the old wrote 0);
  text     the facts the old text gave in words: the quantization, the critical partition's
           sharing, each answer, the one-GPU test warning, each target's met word;
  exit     where BEFORE/N.rc and AFTER/N.rc hold the exit codes of `--from FILE --check-targets`
           (latency and adaptive), the same code.
Prints one line per file and exits 1 on any difference. With --self-test, each number of each
record (every value, each table field's first number) is then changed by a millionth, one at a
time, and each change must be found: a line per file says how many were.

  scripts/compare-bench-reports.py BEFORE AFTER FILES.txt [--self-test]
      (FILES.txt: "N MODE path" per line, MODE latency, adaptive or comm)
"""
import csv
import json
import math
import os
import sys


class Diff:
    def __init__(self):
        self.problems = []

    def same(self, what, old, new, rel=0.0):
        if isinstance(old, list) and isinstance(new, list) and old != new:
            at = next((i for i, (a, b) in enumerate(zip(old, new)) if a != b), None)
            self.problems.append(f"{what}: {len(old)} before, {len(new)} after" if at is None else
                                 f"{what} [{at}]: before {old[at]!r}, after {new[at]!r}")
            return False
        if isinstance(old, float) or isinstance(new, float):
            ok = old is not None and new is not None and (
                old == new or (rel > 0 and math.isclose(old, new, rel_tol=rel)))
        else:
            ok = old == new
        if not ok:
            self.problems.append(f"{what}: before {old!r}, after {new!r}")
        return ok


def value(rec, key):
    for part in ("values", "config", "environment"):
        if key in rec[part]:
            return rec[part][key]["value"]
    raise KeyError(key)


def rows(rec, table):
    return rec["tables"][table]["rows"] if table in rec["tables"] else []


def p99(xs):  # measure::summarize's: linear between closest ranks
    s = sorted(xs)
    rank = 0.99 * (len(s) - 1)
    lo = math.floor(rank)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (rank - lo)


def grouped(d, table, *keys):
    """The rows of a raw table by their key fields, in order; each group's "sample" must count
    from 0."""
    out = {}
    for r in table:
        out.setdefault(tuple(r[k] for k in keys), []).append(r)
    for at, group in out.items():
        d.same(f"sample numbers of {at}", list(range(len(group))), [r["sample"] for r in group])
    return out


def column(groups, at, field):
    return [r[field] for r in groups.get(at, [])]


def check_environment(d, old_env, rec):
    """Every field of the environment the old file had, as the record shows it."""
    new = rec["environment"]
    for k, v in old_env.items():
        if k not in new:
            d.problems.append(f"environment {k} lost")
            continue
        w = new[k]["value"]
        if isinstance(v, bool):
            d.same(f"environment {k}", "yes" if v else "no", w)
        elif isinstance(v, (int, float, str)):
            d.same(f"environment {k}", v, w)
        elif isinstance(v, dict) and "available" in v:  # the clocks, as text
            for part in ("sm_mhz", "sm_max_mhz", "mem_mhz", "mem_max_mhz"):
                if v.get("available") and f"{v[part]}" not in (w or ""):
                    d.problems.append(f"environment {k} lacks {part} {v[part]}: {w!r}")
        elif v is not None:
            d.same(f"environment {k}", json.dumps(v, separators=(",", ":")), w)


def check_config(d, old_config, rec, skip=()):
    for k, v in old_config.items():
        if k in skip:
            continue
        d.same(f"config {k}", v, value(rec, k))


def compare_latency(d, old, rec, text):
    check_config(d, old["config"], rec)
    split = old["split"]
    d.same("device SMs", split["device_sms"], value(rec, "device_sms"))
    d.same("critical SMs", split["critical_sms"], value(rec, "critical_sms_obtained"))
    d.same("background SMs", split["background_sms"], value(rec, "background_sms_obtained"))
    b = old["background"]
    d.same("unit", b["unit"], value(rec, "background_unit"))
    d.same("unit scale", b["unit_scale"], value(rec, "background_unit_scale"))
    d.same("SM share", b["sm_share"], value(rec, "sm_share"))
    d.same("quantization", b["quantization"], value(rec, "quantization"))
    d.same("alone full", b["alone_full"]["rate_display"], value(rec, "background_alone_full"))
    d.same("alone share", b["alone_share"]["rate_display"], value(rec, "background_alone_share"))
    d.same("alone share of full", b["alone_share"]["of_full"],
           value(rec, "background_alone_share_of_full"))
    rates = {r["measured"]: r for r in rows(rec, "background")}
    expected = [("alone_full", b["alone_full"]), ("alone_share", b["alone_share"])]
    expected += [(p["name"], p["background"]) for p in old["placements"] if "background" in p]
    d.same("background rates measured", len(expected), len(rates))
    for name, o in expected:
        n = rates.get(name, {})
        for ok, nk in (("work", "work"), ("seconds", "seconds"), ("rate_display", "rate"),
                       ("of_full", "of_full"), ("of_sm_share", "of_sm_share")):
            d.same(f"background {name} {ok}", o[ok], n.get(nk))
    placements = rows(rec, "placements")
    samples = grouped(d, rows(rec, "samples"), "placement")
    d.same("placements", len(old["placements"]), len(placements))
    count = 0
    for o, n in zip(old["placements"], placements):
        name, c = o["name"], o["critical"]
        d.same("placement", name, n["placement"])
        d.same(f"{name} description", o["description"], n["description"])
        for s in ("min", "p50", "p90", "p99", "max"):
            d.same(f"{name} host {s}", c["host_us"][s], n[f"host_{s}_us"])
        d.same(f"{name} noise", 100 * c["host_us"]["noise"], n["noise"])
        d.same(f"{name} GPU p50", c["gpu_us"]["p50"], n["gpu_p50_us"])
        delay = c["start_delay_us"]
        for s in ("p50", "p99"):
            d.same(f"{name} start delay {s}", delay[s] if delay["count"] else None,
                   n[f"start_delay_{s}_us"])
        bg = o.get("background")
        for ok, nk in (("rate_display", "background_rate"), ("of_full", "of_full"),
                       ("of_sm_share", "of_sm_share")):
            d.same(f"{name} {nk}", bg[ok] if bg else None, n[nk])
        for field in ("host_us", "gpu_us", "start_delay_us"):
            old_s, new_s = c["samples"][field], column(samples, (name,), field)
            new_s = new_s[:len(old_s)] if all(x is None for x in new_s[len(old_s):]) else new_s
            d.same(f"{name} samples {field}", old_s, new_s)
        count += len(c["samples"]["host_us"])
    targets = rows(rec, "targets")
    d.same("targets", len(old["targets"]), len(targets))
    for o, n in zip(old["targets"], targets):
        name = o["name"]
        d.same("target", name, n["target"])
        d.same(f"{name} rule", o["rule"], n["rule"])
        d.same(f"{name} value", o["value"], n["value"])
        d.same(f"{name} limit", o["limit"], n["limit"])
        d.same(f"{name} direction", "<=" if o["at_most"] else ">=", n["relation"])
        met = "yes" if o["met"] else ("NO" if o["value"] is not None else "n/a")
        d.same(f"{name} met", met, n["met"])
        if not any(l.startswith(name + " ") and l.rstrip().endswith(" " + met)
                   for l in text.splitlines()):
            d.problems.append(f"the text lacks target {name} with '{met}'")
    if b["quantization"] not in text:
        d.problems.append("the text lacks the quantization")
    return f"{len(placements)} placements, {count} samples, {len(targets)} targets"


def compare_adaptive(d, old, rec, text):
    c = old["config"]
    check_config(d, c, rec, skip=("mode", "shrink_to", "policies"))
    d.same("config shrink_to", ",".join(map(str, c["shrink_to"])), value(rec, "shrink_to"))
    d.same("config policies", ",".join(c["policies"]), value(rec, "policies"))
    s = old["split"]
    d.same("device SMs", s["device_sms"], value(rec, "device_sms"))
    d.same("critical SMs", s["critical_sms"], value(rec, "critical_sms_obtained"))
    d.same("wide SMs", s["wide_sms"], value(rec, "wide_sms_obtained"))
    d.same("narrow SMs", ",".join(map(str, s["narrow_sms"])), value(rec, "narrow_sms_obtained"))
    d.same("critical shared", "yes" if s["critical_shared"] else "no",
           value(rec, "critical_shared"))
    d.same("critical sharing", s["critical_sharing"], value(rec, "critical_sharing"))
    if s["critical_sharing"] not in text:
        d.problems.append("the text lacks the critical partition's sharing")
    background = rows(rec, "background")
    alone = [r for r in background if r["measured"] == "alone"]
    d.same("background alone", len(old["background_alone"]), len(alone))
    for o, n in zip(old["background_alone"], alone):
        d.same("alone SMs", o["sms"], n["sms"])
        d.same(f"alone {o['sms']} bytes", o["rate"]["bytes"], n["bytes"])
        d.same(f"alone {o['sms']} seconds", o["rate"]["seconds"], n["seconds"])
        d.same(f"alone {o['sms']} GB/s", o["rate"]["bytes_per_s"] / 1e9, n["rate_gbs"])
    runs = {r["measured"]: r for r in background if r["measured"] != "alone"}
    configs = rows(rec, "configurations")
    samples = grouped(d, rows(rec, "samples"), "configuration")
    waits = grouped(d, rows(rec, "waits"), "configuration")
    d.same("configurations", len(old["configurations"]), len(configs))
    count = 0
    for o, n in zip(old["configurations"], configs):
        name, cr = o["name"], o["critical"]
        d.same("configuration", name, n["name"])
        d.same(f"{name} description", o["description"], n["description"])
        d.same(f"{name} N", o["shrink_to"] or None, n["shrink_to"])
        d.same(f"{name} policy", o["policy"] or None, n["policy"])
        d.same(f"{name} host p50", cr["host_us"]["p50"], n["host_p50_us"])
        d.same(f"{name} host p99", cr["host_us"]["p99"], n["host_p99_us"])
        d.same(f"{name} GPU p50", cr["gpu_us"]["p50"], n["gpu_p50_us"])
        d.same(f"{name} wait p99", p99(o["wait_us"]) if o["wait_us"] else None, n["wait_p99_us"],
               rel=1e-9)
        bg = o.get("background")
        d.same(f"{name} GB/s", bg["bytes_per_s"] / 1e9 if bg else None, n["background_gbs"])
        if bg:
            d.same(f"{name} bytes", bg["bytes"], runs.get(name, {}).get("bytes"))
            d.same(f"{name} seconds", bg["seconds"], runs.get(name, {}).get("seconds"))
            d.same(f"{name} rate", bg["bytes_per_s"] / 1e9, runs.get(name, {}).get("rate_gbs"))
            d.same(f"{name} SMs", None, runs.get(name, {}).get("sms"))
        for field in ("host_us", "gpu_us"):
            d.same(f"{name} samples {field}", cr["samples"][field],
                   column(samples, (name,), field))
        d.same(f"{name} waits", o["wait_us"], column(waits, (name,), "wait_us"))
        count += len(cr["samples"]["host_us"])
    by_name = {r["name"]: r for r in configs}
    for t in old["targets"]:
        n = by_name.get(t["name"], {})
        d.same(f"{t['name']} isolation", t["isolation"], n.get("isolation"))
        d.same(f"{t['name']} of static", t["background_of_static"], n.get("of_static"))
        d.same(f"{t['name']} met", t["met"], n.get("met") == "yes")
        d.same("isolation limit", t["isolation_limit"], value(rec, "isolation_limit"))
        d.same("background limit", t["background_limit"], value(rec, "background_limit"))
    return f"{len(configs)} configurations, {count} samples, {len(old['targets'])} verdicts"


def compare_comm(d, old, rec, text):
    for k in ("gpus", "iterations", "warmup", "gemm_n", "tolerance_percent", "gemm_alone_tflops"):
        d.same(k, old[k], value(rec, k))
    d.same("devices", ",".join(map(str, old["devices"])), value(rec, "devices"))
    d.same("ks", ",".join(map(str, old["ks"])), value(rec, "ks"))
    points = rows(rec, "points")
    samples = grouped(d, rows(rec, "samples"), "bytes", "mode")
    parts = {}
    for r in rows(rec, "partitions"):
        parts.setdefault((r["bytes"], r["mode"]), []).append(r)
    seen = {r["mode"]: r for r in rows(rec, "confinement")}
    d.same("points", len(old["points"]), len(points))
    count = 0
    for o, n in zip(old["points"], points):
        at = f"{o['mode']} {o['bytes']}"
        d.same(f"{at} mode", o["mode"], n["mode"])
        d.same(f"{at} bytes", o["bytes"], n["bytes"])
        d.same(f"{at} samples", len(o["allreduce_us"]), n["samples"])
        for k in ("p50_us", "p99_us", "busbw_gbs"):
            d.same(f"{at} {k}", o.get(k), n[k])
        if n["gemm_tflops"] is None:
            if o["mode"] != "alone" and o["allreduce_us"]:
                d.problems.append(f"{at}: GEMM {o['gemm_tflops']} lost")
        else:
            d.same(f"{at} GEMM", o["gemm_tflops"], n["gemm_tflops"])
        kept = 100 * o["gemm_tflops"] / old["gemm_alone_tflops"] if (
            n["gemm_tflops"] is not None and old["gemm_alone_tflops"] > 0) else None
        d.same(f"{at} GEMM kept", kept, n["gemm_kept"], rel=1e-12)
        d.same(f"{at} confined", {True: "yes", False: "no", None: None}[o.get("confined")],
               n["confined"])
        d.same(f"{at} failure", o["failure"] or None, n["failure"])
        mine = parts.get((o["bytes"], o["mode"]), [])
        d.same(f"{at} SMs per GPU", o["comm_sms"], [r["sms"] for r in mine])
        d.same(f"{at} GPUs", old["devices"][:len(mine)], [r["gpu"] for r in mine])
        if o.get("confinement"):
            d.same(f"{at} confinement", o["confinement"], seen.get(o["mode"], {}).get("seen"))
        d.same(f"{at} all-reduce times", o["allreduce_us"],
               column(samples, (o["bytes"], o["mode"]), "allreduce_us"))
        count += len(o["allreduce_us"])
    answers = rows(rec, "answers")
    d.same("answers", len(old["answers"]), len(answers))
    for o, n in zip(old["answers"], answers):
        at = f"answer {o['bytes']}"
        d.same(f"{at} bytes", o["bytes"], n["bytes"])
        d.same(f"{at} size", n["size"], next((p["size"] for p in points
                                               if p["bytes"] == o["bytes"]), None))
        d.same(f"{at} k", o["k"], n["k"])
        d.same(f"{at} k mode", o.get("k_mode") or None, n["k_mode"])
        d.same(f"{at} k p50", o["k_p50_us"] if o["k"] is not None else None, n["k_p50_us"])
        d.same(f"{at} best mode", o["best_mode"] or None, n["best_mode"])
        d.same(f"{at} best p50", o["best_p50_us"] if o["best_mode"] else None, n["best_p50_us"])
        d.same(f"{at} GEMM kept", o["gemm_fraction"] or None, n["gemm_fraction"])
        d.same(f"{at} text", o["text"], n["answer"])
        if o["text"] not in text:
            d.problems.append(f"the text lacks the answer '{o['text']}'")
    warned = old["environment"].get("one_gpu_test", False)
    if warned != ("One-GPU test run" in text):
        d.problems.append("the one-GPU test warning is " + ("lost" if warned else "new"))
    return f"{len(points)} points, {count} all-reduce times, {len(answers)} answers"


def compare_csv(d, mode, before, after):
    old, new = list(csv.DictReader(open(before))), list(csv.DictReader(open(after)))
    d.same("CSV rows", len(old), len(new))
    for i, (o, n) in enumerate(zip(old, new)):
        for k, v in o.items():
            if k not in n:
                d.problems.append(f"CSV column {k} lost")
                return
            w = n[k]
            if mode != "comm" and k.endswith("_us"):
                ok = (v == w == "") or (v != "" and w != "" and abs(float(v) - float(w)) <= 5e-4)
            elif mode == "comm" and k == "gemm_tflops" and w == "":
                ok = float(v) == 0 and (o["mode"] == "alone" or o["samples"] == "0")
            elif v != "" and w != "" and k not in ("mode", "comm_sms", "confined", "failure",
                                                   "placement", "configuration"):
                ok = float(v) == float(w)
            else:
                ok = v == w
            if not ok:
                d.problems.append(f"CSV row {i + 1} {k}: before {v!r}, after {w!r}")


def compare_record(mode, old, rec, text):
    """The problems of `rec` against `old`, and what was counted."""
    d = Diff()
    kinds = {"latency": "bench", "adaptive": "bench-adaptive", "comm": "bench-comm"}
    d.same("kind", "greenctx." + kinds[mode], rec["kind"])
    d.same("schema", 2, rec["schema"])
    compare = {"latency": compare_latency, "adaptive": compare_adaptive, "comm": compare_comm}[mode]
    try:
        check_environment(d, old["environment"], rec)
        counts = compare(d, old, rec, text)
    except (KeyError, TypeError, IndexError, AttributeError) as e:
        counts = "?"
        d.problems.append(f"missing or mistyped in the record: {e!r}")
    return d, counts


def numbers(rec):
    """Where the record holds a number: every value, and each field's first number in each
    table."""
    for part in ("environment", "config", "values"):
        for k, q in rec[part].items():
            if isinstance(q["value"], (int, float)) and not isinstance(q["value"], bool):
                yield (part, k), q, "value"
    for name, t in rec["tables"].items():
        for f in t["fields"]:
            r = next((r for r in t["rows"] if isinstance(r.get(f), (int, float))
                      and not isinstance(r.get(f), bool)), None)
            if r is not None:
                yield (name, f), r, f


def self_test(mode, old, rec, text):
    """Each number of the record changed by a millionth (or one millionth where it is 0), one at
    a time: how many the comparison catches, and which it does not."""
    caught, missed = 0, []
    for at, holder, key in list(numbers(rec)):
        was = holder[key]
        holder[key] = was * (1 + 1e-6) if was else 1e-6
        if compare_record(mode, old, rec, text)[0].problems:
            caught += 1
        else:
            missed.append(".".join(at))
        holder[key] = was
    return caught, missed


def main():
    before, after, listing = sys.argv[1:4]
    testing = "--self-test" in sys.argv[4:]
    bad = 0
    for line in open(listing):
        n, mode, path = line.split()
        old = json.load(open(f"{before}/{n}.json"))
        rec = json.load(open(f"{after}/{n}.json"))
        text = open(f"{after}/{n}.txt").read()
        d, counts = compare_record(mode, old, rec, text)
        compare_csv(d, mode, f"{before}/{n}.csv", f"{after}/{n}.csv")
        if os.path.exists(f"{before}/{n}.rc"):  # the exit code of --from FILE --check-targets
            d.same("exit code", open(f"{before}/{n}.rc").read().strip(),
                   open(f"{after}/{n}.rc").read().strip())
        print(f"{n} {mode} {path}: {'same numbers' if not d.problems else 'DIFFERENT'} ({counts})")
        for p in d.problems[:20]:
            print("  " + p)
        if len(d.problems) > 20:
            print(f"  ... and {len(d.problems) - 20} more")
        bad += bool(d.problems)
        if testing and not d.problems:
            caught, missed = self_test(mode, old, rec, text)
            print(f"  self-test: {caught} of {caught + len(missed)} numbers of the record changed "
                  f"by a millionth were caught" + (f"; NOT: {', '.join(missed)}" if missed else ""))
            bad += bool(missed)
    sys.exit(1 if bad else 0)


main()
