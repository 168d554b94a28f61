#!/usr/bin/env python3
"""Compares what `greenctx info`, `verify` and `split` said before and after they moved to the report
model (issue 23), and `tune`'s first JSON against its record: every field of the old JSON (schema 1,
or the files before it) must have its equal in the record's JSON. Used two ways:

  saved files: OLD is a file under bench/results/, NEW is `greenctx KIND --from OLD --json -`
  live runs:   OLD is the JSON of the binary before the change, NEW of the binary after, for the
               same command on the same GPU (--live: the probes' times, which differ from run to
               run, and the date are not compared; everything else, SM maps included, must be equal)

  scripts/compare-command-records.py [--live] KIND OLD.json NEW.json ...   (KIND: info|verify|split|tune)
  scripts/compare-command-records.py --self-test KIND OLD.json NEW.json
      (changes every number of NEW by one, one at a time, and exits 0 only when the comparison
      catches each change; row numbers, which the old JSON gives by position, are left alone)

Prints one line per pair and exits 1 on any difference.
"""
import copy
import json
import sys


class Mismatch(Exception):
    pass


def values(doc, part):
    return {k: v["value"] for k, v in doc[part].items()}


def rows(doc, table):
    return doc["tables"][table]["rows"]


def yes_no(b):
    return "yes" if b else "no"


def same(what, old, new, problems):
    if isinstance(old, float) or isinstance(new, float):
        equal = old is not None and new is not None and float(old) == float(new)
    else:
        equal = old == new
    if not equal:
        problems.append(f"{what}: before {old!r}, after {new!r}")


def compare_info(old, new, live, problems):
    env, val = values(new, "environment"), values(new, "values")
    same("driver_version", old["driver_version"], env["driver_version"], problems)
    same("toolkit_version", old["toolkit_version"], env["toolkit_version"], problems)
    for key in ("driver_library", "device_count", "granularity_source"):
        same(key, old[key], val[key], problems)
    mc = old["max_connections"]
    same("max_connections", mc["in_effect"], val["max_connections"], problems)
    same("max_connections_source", mc["source"], val["max_connections_source"], problems)
    same("max_connections_environment", mc["environment"], val["max_connections_environment"],
         problems)
    if "workqueue_config_provisioned" in mc:
        same("workqueue_config_provisioned", yes_no(mc["workqueue_config_provisioned"]),
             val["workqueue_config_provisioned"], problems)
    gpus = old.get("devices", [old])
    new_gpus = rows(new, "gpus")
    same("GPUs", len(gpus), len(new_gpus), problems)
    for g, n in zip(gpus, new_gpus):
        at = f"GPU {g['device']}"
        for key in ("device", "gpu", "compute_capability", "sm_count", "min_partition",
                    "coscheduled_alignment", "pci_bus_id", "valid_sizes"):
            if key in g:
                same(f"{at} {key}", g[key], n[key], problems)
        same(f"{at} priority_least", g["stream_priorities"]["least"], n["priority_least"], problems)
        same(f"{at} priority_greatest", g["stream_priorities"]["greatest"], n["priority_greatest"],
             problems)
        if "mps" in g:
            active = g["mps"]["active"]
            same(f"{at} mps", "unknown" if active is None else "active" if active else "not active",
                 n["mps"], problems)
    features = {r["feature"]: r for r in rows(new, "features")}
    same("features", sorted(old["features"]), sorted(features), problems)
    for name, f in old["features"].items():
        if name in features:
            same(f"{name} native_since", f["native_since"], features[name]["native_since"], problems)
            same(f"{name} status", f["status"], features[name]["status"], problems)
            same(f"{name} description", f["description"], features[name]["description"], problems)


def compare_verify(old, new, live, problems):
    cfg, val = values(new, "config"), values(new, "values")
    same("split", old["split"], cfg["split"], problems)
    same("ignore_coscheduling", yes_no(old["flags"] == "ignore_sm_coscheduling"),
         cfg["ignore_coscheduling"], problems)
    same("ok", yes_no(old["ok"]), val["ok"], problems)
    gpus = old.get("devices", [old])
    same("gpus_passed", sum(1 for g in gpus if g["ok"]), val["gpus_passed"], problems)
    new_gpus = rows(new, "gpus")
    same("GPUs", len(gpus), len(new_gpus), problems)
    parts = rows(new, "partitions")
    for g, n in zip(gpus, new_gpus):
        env = g["environment"]
        at = f"GPU {env['device']}"
        for key in ("device", "gpu", "sm_count"):
            same(f"{at} {key}", env[key], n[key], problems)
        same(f"{at} piece_size", g["plan"]["piece_size"], n["piece_size"], problems)
        same(f"{at} groups", g["plan"]["groups"], n["groups"], problems)
        same(f"{at} ok", yes_no(g["ok"]), n["ok"], problems)
        same(f"{at} violations", len(g["violations"]), n["violations"], problems)
        if not live:
            same(f"{at} timed", yes_no(g.get("timed", False)), n["timed"], problems)
            if len(g["partitions"]) > 1:
                same(f"{at} min_overlap_us", g["min_overlap_us"], n["min_overlap_us"], problems)
        mine = [p for p in parts if p["device"] == env["device"] and p["label"] != "all"]
        same(f"{at} partitions", len(g["partitions"]), len(mine), problems)
        for i, (p, q) in enumerate(zip(g["partitions"], mine)):
            where = f"{at} partition {i}"
            for key in ("label", "requested", "obtained", "used", "map"):
                same(f"{where} {key}", p[key], q[key], problems)
            same(f"{where} sms", " ".join(str(s) for s in p["sms"]), q["sms"], problems)
            same(f"{where} rounding", p["rounding"] or None, q["rounding"] or None, problems)
            if not live:
                same(f"{where} start_us", p["start_us"], q["start_us"], problems)
                same(f"{where} end_us", p["end_us"], q["end_us"], problems)
        combined = ["."] * len(g["partitions"][0]["map"]) if g["partitions"] else []
        for p in g["partitions"]:
            for c, mark in enumerate(p["map"]):
                if mark != "." and c < len(combined):
                    combined[c] = mark if combined[c] == "." else "!"
        every = [p for p in parts if p["device"] == env["device"] and p["label"] == "all"]
        same(f"{at} combined map", ["".join(combined)], [p["map"] for p in every], problems)
        for text in g["notes"]:
            if not any(text in x for x in new["notes"]):
                problems.append(f"{at}: the note '{text}' is not in the record")
        for text in g["violations"]:
            if not any("VIOLATION: " + text in x for x in new["notes"]):
                problems.append(f"{at}: the violation '{text}' is not in the record")


def compare_split(old, new, live, problems):
    cfg, val = values(new, "config"), values(new, "values")
    same("request", old["request"], cfg["request"], problems)
    same("dry_run", yes_no(old["dry_run"]), cfg["dry_run"], problems)
    same("native", yes_no(old["native"]), val["native"], problems)
    for key in ("split_calls", "remainder_sms", "explanation"):
        same(key, old[key], val[key], problems)
    same("advice", old.get("advice"), val["advice"], problems)
    same("ok", yes_no(old["ok"]), val["ok"], problems)
    groups = rows(new, "groups")
    same("groups", len(old["groups"]), len(groups), problems)
    for i, (g, n) in enumerate(zip(old["groups"], groups)):
        at = f"group {i}"
        p = g["params"]
        same(f"{at} smCount", p["smCount"], n["sm_count"], problems)
        same(f"{at} coscheduledSmCount", p["coscheduledSmCount"], n["coscheduled_sm_count"],
             problems)
        same(f"{at} preferredCoscheduledSmCount", p["preferredCoscheduledSmCount"],
             n["preferred_coscheduled_sm_count"], problems)
        same(f"{at} flags", p["flags"], n["flags"], problems)
        same(f"{at} requested", g["requested"], n["requested"] if n["requested"] != "all" else 0,
             problems)
        same(f"{at} obtained", g["obtained"] if g["made"] else None, n["obtained"], problems)
        same(f"{at} made", yes_no(g["made"]), n["made"], problems)
        for key in ("split_call", "piece_size"):
            same(f"{at} {key}", g[key], n[key], problems)
        same(f"{at} ignore_sm_coscheduling_pieces", yes_no(g["ignore_sm_coscheduling_pieces"]),
             n["ignore_sm_coscheduling_pieces"], problems)
        same(f"{at} pieces", g.get("pieces") or None, n["pieces"], problems)
        same(f"{at} note", g["note"] or None, n["note"], problems)
        check = g.get("check", {})
        for key in ("context_sms", "sms_used", "max_active_clusters", "clusters_promised"):
            same(f"{at} {key}", check.get(key), n[key], problems)


def compare_tune(old, new, live, problems):
    """tune's schema-1 files (tune was on the record model from the day it appeared, but its first
    JSON was its own): the environment, settings, the answer, the time alone, every point of the
    curve and of each search's measurements, and each search's choice and reason."""
    env, cfg, val = (values(new, part) for part in ("environment", "config", "values"))
    for key, v in old["environment"].items():
        same(f"environment.{key}", v, env.get(key), problems)
    same("objective", old["objective"], cfg["objective"], problems)
    same("samples", old["samples"], cfg["samples"], problems)
    same("confirm_samples", old["confirm_samples"], cfg["confirm_samples"], problems)
    same("sizes", ",".join(str(n) for n in old["candidates"]), cfg["sizes"], problems)
    searches = [s for s in ("guided", "exhaustive") if old[s] is not None]
    same("search", "both" if len(searches) == 2 else searches[0], cfg["search"], problems)
    same("split", old["split"], val["split"], problems)
    answer = old["exhaustive"] or old["guided"]  # the decisive search
    same("chosen_sms", answer["chosen"], val["chosen_sms"], problems)
    same("closest_sms", answer["closest"], val["closest_sms"], problems)
    same("limit_us", answer["limit_us"], val["limit_us"], problems)
    alone = old["alone_gpu_us"]
    same("alone_p50_us", alone["p50"], val["alone_p50_us"], problems)
    same("alone_p99_us", alone["p99"], val["alone_p99_us"], problems)
    same("alone_samples", alone["count"], val["alone_samples"], problems)
    notes = "\n".join(new["notes"])
    if old["reason"] not in notes:
        problems.append(f"the reason {old['reason']!r} is not in the notes")

    def same_point(what, p, row):
        same(f"{what}.critical_sms", p["critical_sms"], row["critical_sms"], problems)
        same(f"{what}.samples", p["critical_gpu_us"]["count"], row["samples"], problems)
        same(f"{what}.p50_us", p["critical_gpu_us"]["p50"], row["p50_us"], problems)
        same(f"{what}.p99_us", p["critical_gpu_us"]["p99"], row["p99_us"], problems)
        same(f"{what}.background_rate", p["background_rate"], row["background_rate"], problems)

    curve = rows(new, "curve")
    same("curve points", len(old["curve"]), len(curve), problems)
    for i, (p, row) in enumerate(zip(old["curve"], curve)):
        same_point(f"curve[{i}]", p, row)
        same(f"curve[{i}].background_sms", p["background_sms"], row["background_sms"], problems)
        meets = p["critical_gpu_us"]["p99"] <= answer["limit_us"]
        same(f"curve[{i}].meets", yes_no(meets), row["meets"], problems)
        same(f"curve[{i}].pareto", "yes" if p["critical_sms"] in old["pareto"] else "",
             row["pareto"], problems)
        chosen = p["critical_sms"] == answer["chosen"]
        same(f"curve[{i}].chosen", "<- chosen" if chosen else "", row["chosen"], problems)
    for s in searches:
        a = old[s]
        same(f"{s}_chosen_sms", a["chosen"], val[f"{s}_chosen_sms"], problems)
        same(f"{s}_measurements", len(a["measured"]), val[f"{s}_measurements"], problems)
        same(f"{s}_seconds", a["seconds"], val[f"{s}_seconds"], problems)
        if a["reason"] not in notes:
            problems.append(f"the {s} search's reason {a['reason']!r} is not in the notes")
        measured = rows(new, s)
        same(f"{s} measurements", len(a["measured"]), len(measured), problems)
        for i, (p, row) in enumerate(zip(a["measured"], measured)):
            same_point(f"{s}[{i}]", p, row)
            same(f"{s}[{i}].seconds", p["seconds"], row["seconds"], problems)
    if len(searches) == 2:  # the comparison of the two searches, from the old numbers
        rate = {p["critical_sms"]: p["background_rate"] for p in old["curve"]}
        g, e = old["guided"], old["exhaustive"]
        same("rate_share", rate[g["chosen"]] / rate[e["chosen"]], val["rate_share"], problems)
        same("time_share", g["seconds"] / e["seconds"], val["time_share"], problems)


COMPARE = {"info": compare_info, "verify": compare_verify, "split": compare_split,
           "tune": compare_tune}


def compare(kind, old, new, live):
    problems = []
    if new.get("kind") != "greenctx." + kind or new.get("schema") != 2:
        return [f"the new document is {new.get('kind')} schema {new.get('schema')}"]
    try:
        COMPARE[kind](old, new, live, problems)
    except (KeyError, TypeError, IndexError) as e:
        problems.append(f"a field is missing or of another type: {e!r}")
    return problems


# Row numbers, not facts of the old JSON (which gives them by position).
POSITIONS = {"group", "partition", "order"}
# What --live leaves out: the probes' times, which differ from run to run.
TIMES = {"start_us", "end_us", "min_overlap_us"}


def numbers(doc):
    """Every number of the record's values and tables, as (part, name, row, key)."""
    for key, q in doc["values"].items():
        if isinstance(q["value"], (int, float)) and not isinstance(q["value"], bool):
            yield "values", key, None, "value"
    for name, table in doc["tables"].items():
        for i, row in enumerate(table["rows"]):
            for key, value in row.items():
                if isinstance(value, (int, float)) and not isinstance(value, bool):
                    yield "tables", name, i, key


def self_test(kind, old, new, live):
    """Every number of NEW changed by one, one at a time: the names of the changes not caught."""
    missed, tried = [], 0
    for part, name, i, key in numbers(new):
        if key in POSITIONS or (live and key in TIMES):
            continue
        changed = copy.deepcopy(new)
        if part == "values":
            changed["values"][name]["value"] += 1
        else:
            changed["tables"][name]["rows"][i][key] += 1
        tried += 1
        if not compare(kind, old, changed, live):
            missed.append(f"{name}[{i}].{key}" if i is not None else name)
    return tried, missed


def main(argv):
    live = "--live" in argv
    testing = "--self-test" in argv
    args = [a for a in argv if a not in ("--live", "--self-test")]
    if len(args) < 3 or (len(args) - 1) % 2 or args[0] not in COMPARE:
        print(__doc__, file=sys.stderr)
        return 2
    kind, failed = args[0], False
    for old_path, new_path in zip(args[1::2], args[2::2]):
        with open(old_path) as f:
            old = json.load(f)
        with open(new_path) as f:
            new = json.load(f)
        if testing:
            tried, missed = self_test(kind, old, new, live)
            print(f"self-test {old_path}: {tried - len(missed)} of {tried} numbers changed by one "
                  f"were caught" + (f"; NOT caught: {', '.join(missed)}" if missed else ""))
            failed = failed or bool(missed) or tried == 0
            continue
        problems = compare(kind, old, new, live)
        failed = failed or bool(problems)
        print(f"{old_path}: " + ("same" if not problems else f"{len(problems)} difference(s)"))
        for p in problems:
            print(f"  {p}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
