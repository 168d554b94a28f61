#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The summary of scripts/overhead-check.sh: what confinement on all SMs costs per launch.

Reads the samples (one JSON object per process run, overhead-samples.jsonl) and the run's
environment (meta.json, written by the script), and writes overhead.json and overhead.md into the
output folder; prints the Markdown on stdout.

A sample: {"seq": N, "round": R, "mode": "launch"|"gemm", "stream": KIND, "config": CONFIG,
"exit": STATUS, "wall_s": S, "result": <the program's JSON line, or null>}. CONFIG is one of
plain, confined (`greenctx run --sms <all SMs>`), hooks (the preload library loaded, confining
nothing) and own (the program's own green context, no preload library).

Per stream kind and configuration the number is the median over rounds of each process's own
median (over its repetitions). Ratios are taken round by round: within a round the configurations
of one stream kind run one after another, so each round gives one ratio per pair, and the spread
of those ratios (quartiles, range) says how far the median can be trusted.

Exit status: 0 written; 1 written, but some run was not in the context it should have been (a
confined run outside a green context, or a plain run inside one); 2 unreadable input.

    overhead-summary.py SAMPLES META OUT_DIR
"""
import json
import statistics
import sys
from pathlib import Path

TARGET = 1.02  # the bound: at most 2% per launch
CONFIGS = ("plain", "confined", "hooks", "own")
TITLES = {
    "plain": "plain",
    "confined": "confined (greenctx run)",
    "hooks": "hooks alone",
    "own": "own green context",
}
# (numerator, denominator, what the ratio measures)
PAIRS = (
    ("confined", "plain", "the whole cost of greenctx run on all SMs"),
    ("own", "plain", "the driver's own cost of launching in a green context"),
    ("confined", "own", "the hooks' cost on top of the driver's (both in a green context)"),
    ("hooks", "plain", "the hooks alone: the library loaded, nothing confined"),
)
# The paired runs inside one process (benchmarks/launch_pairs.cu): (mode, config, key, what A / B is).
PAIRED = (
    ("pairs-contexts", "plain", "driver", "a green context over all SMs / the primary context "
     "(libcuda's own launch in both): the driver's cost"),
    ("pairs-hooks", "plain", "control", "cuLaunchKernel as the program gets it / libcuda's own, "
     "no preload: the same function, the method's own difference"),
    ("pairs-hooks", "hooks", "hooks_alone", "the hook / libcuda's own, preload loaded, nothing "
     "confined"),
    ("pairs-hooks", "confined", "hooks", "the hook / libcuda's own, in the green context of "
     "greenctx run: greenctx's cost"),
)
# Whether each configuration's launches must be in a green context.
# Under greenctx run the program is not told its stream is in a green context (cuStreamGetCtx_v2
# names none: the program cannot tell it is confined); overhead-check.sh checks the library's own
# summary instead.
EXPECT_GREEN = {"plain": False, "confined": False, "hooks": False, "own": True}


def spread(values):
    """Median, quartiles and range of a list of numbers (None when empty)."""
    if not values:
        return None
    v = sorted(values)
    if len(v) >= 2:
        q1, _, q3 = statistics.quantiles(v, n=4, method="inclusive")
    else:
        q1 = q3 = v[0]
    return {"n": len(v), "median": statistics.median(v), "q1": q1, "q3": q3,
            "min": v[0], "max": v[-1]}


def per_round(samples, mode, stream, config, field):
    """{round: value} of one configuration's successful runs."""
    out = {}
    for s in samples:
        if (s["mode"], s.get("stream"), s["config"]) != (mode, stream, config):
            continue
        r = s.get("result")
        if s["exit"] == 0 and isinstance(r, dict) and isinstance(r.get(field), (int, float)):
            out[s["round"]] = float(r[field])
    return out


def paired(num, den):
    """Round-by-round ratios and differences of two {round: value} maps."""
    rounds = sorted(set(num) & set(den))
    ratios = [num[r] / den[r] for r in rounds if den[r] > 0]
    diffs = [num[r] - den[r] for r in rounds]
    return {"rounds": rounds, "ratio": spread(ratios), "difference": spread(diffs),
            "ratios": ratios}


def pct(ratio):
    return f"{(ratio - 1) * 100:+.1f}%"


def stream_summary(samples, stream):
    """The numbers of one stream kind: per configuration, per pair, and the verdict."""
    out = {"configs": {}, "pairs": {}, "query_pairs": {}}
    launch = {c: per_round(samples, "launch", stream, c, "median_us_per_launch") for c in CONFIGS}
    query = {c: per_round(samples, "launch", stream, c, "median_us_per_query") for c in CONFIGS}
    for c in CONFIGS:
        noise = []  # the spread inside each process: (max - min) / median of its repetitions
        for s in samples:
            r = s.get("result")
            if ((s["mode"], s.get("stream"), s["config"]) == ("launch", stream, c)
                    and s["exit"] == 0 and isinstance(r, dict) and r.get("us_per_launch")):
                reps = r["us_per_launch"]
                noise.append((max(reps) - min(reps)) / statistics.median(reps))
        values = list(launch[c].values())
        between = None  # the spread between processes: (slowest - fastest) / median of the rounds
        if len(values) >= 2:
            between = (max(values) - min(values)) / statistics.median(values)
        out["configs"][c] = {
            "us_per_launch": spread(values),
            "between_process_spread": between,
            "us_per_query": spread(list(query[c].values())),
            "in_process_spread": spread(noise),
            "per_round_us_per_launch": {str(k): v for k, v in sorted(launch[c].items())},
        }
    for num, den, what in PAIRS:
        key = f"{num}/{den}"
        p = paired(launch[num], launch[den])
        out["pairs"][key] = {"measures": what, **p}
        out["query_pairs"][key] = {"measures": what, **paired(query[num], query[den])}
    out["paired"] = paired_blocks(samples, stream)
    out["verdict"] = verdict(stream, out)
    return out


def paired_blocks(samples, stream):
    """The paired runs of one stream kind: {key: the program's JSON line}."""
    out = {}
    for mode, config, key, what in PAIRED:
        for smp in samples:
            r = smp.get("result")
            if ((smp["mode"], smp.get("stream"), smp["config"]) == (mode, stream, config)
                    and smp["exit"] == 0 and isinstance(r, dict)):
                out[key] = {"measures": what, **r}
    return out


def fmt_paired(r):
    if not r:
        return "–"
    lo, hi = r["rel_ci95"]
    return (f"{r['rel_median'] * 100:+.2f}% ({lo * 100:+.2f} to {hi * 100:+.2f}), "
            f"{r['diff_ns']:+.0f} ns")


def verdict(stream, s):
    """The verdict of one stream kind against the 2% target, in words and numbers."""
    total = s["pairs"]["confined/plain"]["ratio"]
    if not total:
        return {"meets_target": None, "text": f"{stream}: no round with both plain and confined "
                                              "runs: no verdict"}
    driver = s["pairs"]["own/plain"]["ratio"]
    hooks = s["pairs"]["confined/own"]["ratio"]
    alone = s["pairs"]["hooks/plain"]["ratio"]
    diff = s["pairs"]["confined/plain"]["difference"]
    meets = total["median"] <= TARGET
    if meets and total["q3"] <= TARGET:
        status = "meets the 2% target"
    elif meets:
        status = (f"meets the 2% target at the median, but a quarter of the rounds are above "
                  f"{pct(total['q3'])}")
    else:
        status = "misses the 2% target"
    text = (f"{stream}: {status}: confined costs {pct(total['median'])} per launch "
            f"({diff['median'] * 1000:+.0f} ns; rounds' quartiles {pct(total['q1'])} to "
            f"{pct(total['q3'])}, n={total['n']})")
    parts = []
    if driver:
        parts.append(f"the driver's own green context {pct(driver['median'])} (own vs plain)")
    if hooks:
        parts.append(f"the hooks {pct(hooks['median'])} on top of it (confined vs own)")
    if alone:
        parts.append(f"the hooks with nothing confined {pct(alone['median'])} (hooks alone vs "
                     "plain)")
    if parts:
        text += "; of which " + ", ".join(parts)
    if hooks:
        text += (f". greenctx's own part (confined vs own) is "
                 f"{'within' if hooks['median'] <= TARGET else 'above'} 2%")
    query = s["query_pairs"]["hooks/plain"]["difference"]
    if query:
        text += (f"; a cudaStreamQuery through the hooks costs {query['median'] * 1000:+.0f} ns "
                 "(hooks alone vs plain)")
    if total["q3"] - total["q1"] > TARGET - 1:
        text += (f". The rounds spread more widely than the target itself (quartiles "
                 f"{(total['q3'] - total['q1']) * 100:.1f} points apart): more rounds or less noise "
                 "are needed to decide")
    if driver and driver["median"] > TARGET:
        text += (". The driver alone is above 2% here: greenctx cannot meet the target on this "
                 "stream kind by itself")
    elif not driver:
        text += ". No own-green-context rounds: the driver's share is not known"
    inside = s.get("paired", {})
    if "driver" in inside and "hooks" in inside:
        d, h = inside["driver"]["rel_median"], inside["hooks"]["rel_median"]
        text += (f". Inside one process (paired blocks): the driver's green context "
                 f"{d * 100:+.2f}%, greenctx's hooks {h * 100:+.2f}% "
                 f"({inside['hooks']['diff_ns']:+.0f} ns), together about {(d + h) * 100:+.2f}%: "
                 f"{'within' if d + h <= TARGET - 1 else 'above'} the target, greenctx's part "
                 f"{'within' if h <= TARGET - 1 else 'above'} it")
    return {"meets_target": meets, "status": status, "confined_over_plain": total["median"],
            "driver_share": driver["median"] if driver else None,
            "hooks_share": hooks["median"] if hooks else None,
            "hooks_alone": alone["median"] if alone else None, "text": text + "."}


def fmt_us(sp):
    return f"{sp['median']:.3f}" if sp else "–"


def fmt_ratio(p):
    r = p["ratio"]
    if not r:
        return "–"
    return f"x{r['median']:.3f} ({r['q1']:.3f}–{r['q3']:.3f})"


def markdown(report):
    env, st = report["environment"], report["settings"]
    lines = [
        "# What `greenctx run` on all SMs costs per launch",
        "",
        f"- machine: {env.get('gpu', '?')}, driver {env.get('driver', '?')}, "
        f"{env.get('sm_count', '?')} SMs; CPU {env.get('cpu', '?')}",
        f"- date: {env.get('date', '?')}; commit: {env.get('commit', '?')}",
        f"- {st.get('rounds', '?')} rounds; in each, for each stream kind, the four "
        "configurations one after another (order rotated from round to round); each process: "
        f"{st.get('warmup', '?')} warm-up launches, then {st.get('repetitions', '?')} × "
        f"{st.get('launches', '?')} empty-kernel launches, each repetition timed from its first "
        "launch to the return of the synchronization after its last, then "
        f"{st.get('repetitions', '?')} × {st.get('queries', '?')} cudaStreamQuery calls",
        "- numbers: µs per launch, the median over rounds of each process's median; ratios: the "
        "median of the per-round ratios, (quartiles) of those ratios",
        "",
        "## Per launch (µs)",
        "",
        "| stream | " + " | ".join(TITLES[c] for c in CONFIGS)
        + " | confined / plain | own / plain | confined / own | hooks alone / plain |",
        "| --- |" + " ---: |" * (len(CONFIGS) + len(PAIRS)),
    ]
    for stream, s in report["launch"].items():
        cells = [fmt_us(s["configs"][c]["us_per_launch"]) for c in CONFIGS]
        cells += [fmt_ratio(s["pairs"][f"{n}/{d}"]) for n, d, _ in PAIRS]
        lines.append(f"| {stream} | " + " | ".join(cells) + " |")
    lines += ["", "## cudaStreamQuery on the idle stream (µs per call: a hooked call that launches "
              "nothing)", "",
              "| stream | " + " | ".join(TITLES[c] for c in CONFIGS)
              + " | confined / plain | hooks alone / plain |",
              "| --- |" + " ---: |" * (len(CONFIGS) + 2)]
    for stream, s in report["launch"].items():
        cells = [fmt_us(s["configs"][c]["us_per_query"]) for c in CONFIGS]
        cells += [fmt_ratio(s["query_pairs"][k]) for k in ("confined/plain", "hooks/plain")]
        lines.append(f"| {stream} | " + " | ".join(cells) + " |")
    lines += ["", "## Noise", "",
              "Inside a process: the median over processes of (slowest − fastest repetition) / "
              "median repetition. Between processes: (slowest − fastest) / median of the "
              "processes' medians over the rounds.", "",
              "| stream | " + " | ".join(TITLES[c] for c in CONFIGS) + " |",
              "| --- |" + " ---: |" * len(CONFIGS)]
    for stream, s in report["launch"].items():
        cells = []
        for c in CONFIGS:
            inside = s["configs"][c]["in_process_spread"]
            between = s["configs"][c]["between_process_spread"]
            cells.append((f"{inside['median'] * 100:.1f}%" if inside else "–") + " inside, "
                         + (f"{between * 100:.1f}%" if between is not None else "–") + " between")
        lines.append(f"| {stream} | " + " | ".join(cells) + " |")
    if any(s["paired"] for s in report["launch"].values()):
        one = next(r for s in report["launch"].values() for r in s["paired"].values())
        lines += ["", "## Inside one process, block against block (benchmarks/launch_pairs.cu)", "",
                  f"{one['pairs']} pairs of blocks of {one['launches']} empty-kernel launches in "
                  "alternating order; the paired (A − B) / B per launch: median (95% interval of "
                  "the median), and the median difference per launch.", "",
                  "| stream | " + " | ".join(k for _, _, k, _ in PAIRED) + " |",
                  "| --- |" + " ---: |" * len(PAIRED)]
        for stream, s in report["launch"].items():
            cells = [fmt_paired(s["paired"].get(k)) for _, _, k, _ in PAIRED]
            lines.append(f"| {stream} | " + " | ".join(cells) + " |")
        lines += [""] + [f"- {k}: {w}" for _, _, k, w in PAIRED]
        # The hooks mode's runs: the control calls one function twice, the others two.
        odd = [f"{stream} {k}" for stream, s in report["launch"].items()
               for k, r in s["paired"].items()
               if r.get("mode") == "hooks" and r.get("same_function") is not (k == "control")]
        if odd:
            lines += ["", "Not what it should compare (the control must call one function twice, "
                      "the others the hook and the driver's own): " + ", ".join(odd)]
    g = report.get("gemm")
    if g:
        lines += ["", "## SGEMM (the kernels themselves, events)", ""]
        if g["ratio"]:
            r = g["ratio"]
            lines.append(f"confined / plain: x{r['median']:.3f} (range {r['min']:.3f}–"
                         f"{r['max']:.3f}, n={r['n']}); plain {g['plain_tflops']:.1f} TFLOP/s, "
                         f"confined {g['confined_tflops']:.1f} TFLOP/s (medians)")
        else:
            lines.append("no round with both a plain and a confined run")
    lines += ["", "## Verdict (target: at most 2% per launch)", ""]
    lines += [f"- {s['verdict']['text']}" for s in report["launch"].values()]
    if report["failures"] or report["unsupported"] or report["misconfigured"]:
        lines += ["", "## Runs that gave no number", ""]
        for f in report["failures"]:
            lines.append(f"- failed: round {f['round']} {f['mode']} {f['stream']} {f['config']} "
                         f"(exit {f['exit']})")
        for f in report["unsupported"]:
            lines.append(f"- unsupported by this driver (exit 4): {f['mode']} {f['stream']} "
                         f"{f['config']} ({f['rounds']} rounds)")
        for f in report["misconfigured"]:
            lines.append(f"- wrong context (left out): round {f['round']} {f['stream']} "
                         f"{f['config']}: green_context {json.dumps(f['green_context'])}, expected "
                         f"{json.dumps(EXPECT_GREEN[f['config']])}")
    lines += ["", "## Configurations", "",
              "- plain: the program alone",
              "- confined: `greenctx run --sms <all SMs>`: the preload library, one green context "
              "over all SMs made current in place of the primary context, the legacy/blocking "
              "stream rules kept with events",
              "- hooks alone: the preload library loaded and active (GREENCTX_RUN_SMS set) but "
              "confining no device the program uses (GREENCTX_RUN_DEVICES=63): each hooked call "
              "asks for the current context and looks it up, and then goes to the driver "
              "untouched",
              "- own green context: no preload library; the program makes a green context over "
              "all SMs itself (driver API) and launches through the runtime in it: what the "
              "driver costs in a green context, which greenctx cannot remove",
              "", "## Commands", "", "```sh"]
    lines += report["commands"]
    lines += ["```", ""]
    return "\n".join(lines)


def main(argv):
    if len(argv) != 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    samples_path, meta_path, out_dir = Path(argv[1]), Path(argv[2]), Path(argv[3])
    try:
        samples = [json.loads(l) for l in samples_path.read_text().splitlines() if l.strip()]
        meta = json.loads(meta_path.read_text())
    except (OSError, ValueError) as e:
        print(f"overhead-summary: cannot read the input: {e}", file=sys.stderr)
        return 2

    failures, unsupported, misconfigured = [], {}, []
    kept = []
    for s in samples:
        r = s.get("result")
        if s["exit"] == 4:
            key = (s["mode"], s.get("stream"), s["config"])
            unsupported[key] = unsupported.get(key, 0) + 1
            continue
        if s["exit"] != 0 or not isinstance(r, dict):
            failures.append({k: s.get(k) for k in ("round", "mode", "stream", "config", "exit")})
            continue
        green = r.get("green_context")
        if green is not None and green != EXPECT_GREEN[s["config"]]:
            misconfigured.append({"round": s["round"], "mode": s["mode"],
                                  "stream": s.get("stream"), "config": s["config"],
                                  "green_context": green})
            continue
        kept.append(s)

    streams = list(dict.fromkeys(s["stream"] for s in samples if s["mode"] == "launch"))
    report = {
        "environment": meta.get("environment", {}),
        "settings": meta.get("settings", {}),
        "commands": meta.get("commands", []),
        "target": f"confined / plain <= {TARGET} per launch",
        "launch": {st: stream_summary(kept, st) for st in streams},
        "failures": failures,
        "unsupported": [{"mode": m, "stream": st, "config": c, "rounds": n}
                        for (m, st, c), n in unsupported.items()],
        "misconfigured": misconfigured,
    }
    gemm = {c: per_round(kept, "gemm", "legacy", c, "seconds") for c in ("plain", "confined")}
    if any(gemm.values()):
        tflops = {c: per_round(kept, "gemm", "legacy", c, "tflops") for c in ("plain", "confined")}
        p = paired(gemm["confined"], gemm["plain"])
        report["gemm"] = {
            "ratio": p["ratio"], "ratios": p["ratios"],
            "plain_seconds": spread(list(gemm["plain"].values())),
            "confined_seconds": spread(list(gemm["confined"].values())),
            "plain_tflops": statistics.median(tflops["plain"].values()) if tflops["plain"] else 0,
            "confined_tflops": (statistics.median(tflops["confined"].values())
                                if tflops["confined"] else 0),
        }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "overhead.json").write_text(json.dumps(report, indent=2) + "\n")
    md = markdown(report)
    (out_dir / "overhead.md").write_text(md)
    print(md)
    return 1 if misconfigured else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
