#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a program plain, then confined with `greenctx run --sms N`, and checks that the program
could not tell: the same exit status (0) and the same stdout. The programs of tests/run print only
deterministic results on stdout; anything about time or SMs goes to stderr or to files.

    check_run.py --cli PATH --sms N [--devices all|0,1] [--tolerance REL] [--smid]
                 [--expect-report-clean] [--timeout S] [--name NAME] [--out-dir DIR]
                 [--stderr-match RE]... [--confined-exit N] [--confined-stdout-match RE]...
                 [--confined-stderr-match RE]... [--sm-count-file PATH] [--real-sm-count]
                 -- PROGRAM ARGS...

  --tolerance REL   stdouts are compared token by token: every floating-point number within REL
                    (relative) of the other run's and never nan or inf, every other token equal.
                    Without it the stdouts must be identical.
  --smid            passes `--smid-out FILE` to the program in both runs (one line per probe:
                    "NAME DEVICE ID ID ...", the SMs a %smid probe's blocks ran on) and checks that
                    the confined run used at most N SMs per line on every confined device, and that
                    the plain run used more than N on some line of each device (else the check
                    could not have failed).
  --expect-report-clean
                    runs the confined run once more with `greenctx run --strict`: anything the
                    library cannot keep ends the program with exit 86, which fails the check.
  --devices D       passed to `greenctx run` (the devices to confine; the SM check covers these;
                    default: all devices).
  --out-dir DIR     keeps each run's stdout and stderr there (NAME.plain.stdout, ...).
  --stderr-match RE every run's stderr must match the regular expression RE (re.search,
                    multi-line), e.g. a verdict the program gives on stderr.
  --confined-exit N the runs under greenctx must exit N (default 0; the plain run must exit 0).
                    With N other than 0 their stdout is not compared with the plain run's: say what
                    it must show with --confined-stdout-match.
  --confined-stdout-match RE, --confined-stderr-match RE
                    the stdout (stderr) of every run under greenctx must match RE.
  --sm-count-file PATH
                    a file the program writes ('{run}' in PATH as in its arguments): lines
                    "ROUTE VALUE", the SM counts the program read ('#' lines are notes). Every
                    value must be N in the runs under greenctx and the device's own count (`greenctx
                    info --json`, sm_count) in the plain run.
  --real-sm-count   the runs under greenctx get `greenctx run --real-sm-count`: the program is
                    told the device's SM count. For programs whose results depend on the SM
                    count by design (PyTorch's CUDA random numbers): confinement itself must
                    still change nothing.

'{run}' in PROGRAM ARGS becomes plain, confined or strict (e.g. --json out-{run}.json).

Exit status: 0 pass, 1 fail, 2 bad arguments, 77 skipped (no GPU here: nvidia-smi absent or
`greenctx info` exits 3; or the plain run exited 77, e.g. torch missing or one device only).
If $GREENCTX_SEMANTICS_LOG is set, one JSON line of what was done is appended to that file.
Standard library only.
"""
import argparse
import datetime
import difflib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
STRICT_EXIT = 86  # tools/run_protocol.hpp: exit_strict
NO_GPU_EXIT = 3  # greenctx's exit code when there is no driver or no GPU

# A number standing alone (not part of a word): 12, -3.5, 1e-05, .5, nan, inf.
NUMBER = re.compile(
    r"(?<![\w.])([-+]?(?:(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf(?:inity)?))(?![\w.])",
    re.IGNORECASE)


class Run:
    def __init__(self, kind, cmd, rc, stdout, stderr, seconds):
        self.kind, self.cmd, self.rc = kind, cmd, rc
        self.stdout, self.stderr, self.seconds = stdout, stderr, seconds

    def exit_text(self):
        if self.rc == "timeout":
            return "timed out"
        if self.rc == "not started":
            return "did not start"
        if self.rc < 0:
            return f"killed by signal {-self.rc}"
        return f"exit {self.rc}"

    def json(self):
        return {"command": self.cmd, "exit": self.rc, "seconds": round(self.seconds, 3)}


def run(kind, cmd, timeout, env):
    """Runs cmd in its own process group; a timeout kills the whole group."""
    start = time.monotonic()
    try:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                             start_new_session=True)
    except OSError as e:
        return Run(kind, cmd, "not started", "", f"{cmd[0]}: {e}\n", 0.0)
    try:
        out, err = p.communicate(timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
        rc = "timeout"
        err += f"\ncheck_run: killed after {timeout:.0f} s\n".encode()
    return Run(kind, cmd, rc, out.decode(errors="replace"), err.decode(errors="replace"),
               time.monotonic() - start)


def is_float_token(t):
    low = t.lower().lstrip("+-")
    return "." in t or "e" in low or low in ("nan", "inf", "infinity")


def compare(plain, confined, tolerance):
    """Returns a list of differences (empty when the stdouts count as the same)."""
    if tolerance is None:
        if plain == confined:
            return []
        return ["stdout differs"]
    problems = []
    a_lines, b_lines = plain.splitlines(), confined.splitlines()
    if len(a_lines) != len(b_lines):
        problems.append(f"{len(a_lines)} lines plain, {len(b_lines)} confined")
    for n, (a, b) in enumerate(zip(a_lines, b_lines), 1):
        a_parts, b_parts = NUMBER.split(a), NUMBER.split(b)
        if len(a_parts) != len(b_parts):
            problems.append(f"line {n}: different shape: {a!r} vs {b!r}")
            continue
        for i, (x, y) in enumerate(zip(a_parts, b_parts)):
            if i % 2 == 0:  # text between numbers
                if x != y:
                    problems.append(f"line {n}: {a!r} vs {b!r}")
                    break
                continue
            if is_float_token(x) or is_float_token(y):
                fx, fy = float(x), float(y)
                if not (math.isfinite(fx) and math.isfinite(fy)):
                    problems.append(f"line {n}: not finite: {x} vs {y}")
                elif abs(fx - fy) > tolerance * max(abs(fx), abs(fy)):
                    rel = abs(fx - fy) / max(abs(fx), abs(fy))
                    problems.append(f"line {n}: {x} vs {y} (relative difference {rel:.3g} > "
                                    f"{tolerance:g})")
            elif x != y:
                problems.append(f"line {n}: {x} vs {y}")
    return problems


def read_smid(path):
    """{(name, device): set of SM ids}, or raises ValueError."""
    lines = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 2:
                raise ValueError(f"{path}:{n}: expected 'NAME DEVICE ID...', got {line!r}")
            try:
                key = (fields[0], int(fields[1]))
                lines[key] = {int(x) for x in fields[2:]}
            except ValueError:
                raise ValueError(f"{path}:{n}: not numbers: {line!r}") from None
    return lines


def check_smid(plain, confined, sms, devices):
    """Problems with the SMs the probes used; and a one-line summary."""
    problems = []
    if not confined:
        problems.append("the confined run wrote no --smid-out lines")
    if set(plain) != set(confined):
        problems.append(f"probes differ: plain {sorted(plain)}, confined {sorted(confined)}")
    confined_max = 0
    for (name, dev), ids in sorted(confined.items()):
        if devices is not None and dev not in devices:
            continue
        confined_max = max(confined_max, len(ids))
        if not ids:
            problems.append(f"confined: probe {name} on device {dev} saw no SM")
        elif len(ids) > sms:
            problems.append(f"confined: probe {name} on device {dev} ran on {len(ids)} SMs, more "
                            f"than {sms}")
    plain_max = {}
    for (name, dev), ids in plain.items():
        plain_max[dev] = max(plain_max.get(dev, 0), len(ids))
    for dev, most in sorted(plain_max.items()):
        if (devices is None or dev in devices) and most <= sms:
            problems.append(f"plain: the probes on device {dev} ran on at most {most} SMs, not "
                            f"more than {sms}: this check could not have failed")
    summary = (f"confined: at most {confined_max} SMs per probe (limit {sms}, {len(confined)} "
               f"probes); plain: up to " +
               ", ".join(f"{m} on device {d}" for d, m in sorted(plain_max.items())))
    return problems, summary


def gpu_absent(cli):
    """The reason to skip, or None when a GPU is there."""
    if shutil.which("nvidia-smi") is None:
        return "nvidia-smi is not on PATH: no NVIDIA driver on this machine"
    try:
        r = subprocess.run([cli, "info"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=120)
    except (OSError, subprocess.TimeoutExpired) as e:
        print(f"check_run: '{cli} info' could not run: {e}", file=sys.stderr)
        return None  # not a skip: the confined run will fail and say why
    if r.returncode == NO_GPU_EXIT:
        why = r.stderr.decode(errors="replace").strip().splitlines()
        return f"greenctx info exits {NO_GPU_EXIT} (no GPU): " + (why[-1] if why else "")
    return None


def device_flag(cli):
    """`greenctx run` names its device option --devices or --device, depending on the version."""
    try:
        r = subprocess.run([cli, "run", "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
        if b"--devices" in r.stdout:
            return "--devices"
    except (OSError, subprocess.TimeoutExpired):
        pass
    return "--device"


def device_sm_count(cli):
    """The first device's SM count by `greenctx info --json`, or None."""
    try:
        r = subprocess.run([cli, "info", "--json", "-"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120)
        return int(json.loads(r.stdout)["tables"]["gpus"]["rows"][0]["sm_count"])
    except (OSError, subprocess.TimeoutExpired, ValueError, KeyError, TypeError):
        return None


def read_sm_counts(path):
    """[(route, value)] from a file of "ROUTE VALUE" lines ('#' lines are notes); or raises."""
    routes = []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = line.split()
            if len(fields) != 2:
                raise ValueError(f"{path}:{n}: expected 'ROUTE VALUE', got {line!r}")
            try:
                routes.append((fields[0], int(fields[1])))
            except ValueError:
                raise ValueError(f"{path}:{n}: not a number: {line!r}") from None
    if not routes:
        raise ValueError(f"{path}: no route")
    return routes


def check_sm_count_files(args, runs, record):
    """Problems with the SM counts the runs read: N under greenctx, the device's own plain."""
    problems = []
    real = device_sm_count(args.cli)
    if real is None:
        return ["`greenctx info --json` gave no sm_count: the plain run's counts are unchecked"]
    record["sm_counts"] = {}
    for r in runs:
        want = real if r.kind == "plain" else args.sms
        path = args.sm_count_file.replace("{run}", r.kind)
        try:
            routes = read_sm_counts(path)
        except (OSError, ValueError) as e:
            problems.append(f"--sm-count-file: {e}")
            continue
        record["sm_counts"][r.kind] = dict(routes)
        wrong = [f"{name} {value}" for name, value in routes if value != want]
        print(f"  {r.kind}: {len(routes)} SM-count routes, "
              f"{'all ' + str(want) if not wrong else 'wrong: ' + ', '.join(wrong)}")
        if wrong:
            problems.append(f"the {r.kind} run read SM counts other than {want}: "
                            + ", ".join(wrong))
    return problems


def tail(text, lines=40):
    parts = text.rstrip("\n").splitlines()
    return "\n".join(("    " + x) for x in parts[-lines:])


def parse(argv):
    if "--" not in argv:
        sys.exit("check_run: usage: check_run.py --cli PATH --sms N [options] -- PROGRAM ARGS...")
    i = argv.index("--")
    p = argparse.ArgumentParser(prog="check_run.py", description=__doc__.split("\n")[0])
    p.add_argument("--cli", required=True, help="the greenctx command-line tool")
    p.add_argument("--sms", type=int, required=True)
    p.add_argument("--devices")
    p.add_argument("--tolerance", type=float)
    p.add_argument("--smid", action="store_true")
    p.add_argument("--expect-report-clean", action="store_true")
    p.add_argument("--timeout", type=float, default=600, help="seconds per run (default 600)")
    p.add_argument("--name")
    p.add_argument("--out-dir")
    p.add_argument("--stderr-match", action="append", default=[], metavar="RE")
    p.add_argument("--confined-exit", type=int, default=0, metavar="N")
    p.add_argument("--confined-stdout-match", action="append", default=[], metavar="RE")
    p.add_argument("--confined-stderr-match", action="append", default=[], metavar="RE")
    p.add_argument("--sm-count-file", metavar="PATH")
    p.add_argument("--run-option", action="append", default=[], metavar="OPT",
                   help="one more option of greenctx run for the runs under greenctx (e.g. "
                        "--cuda-13.1); repeatable")
    p.add_argument("--real-sm-count", action="store_true",
                   help="confined runs get greenctx run --real-sm-count (the program is told the "
                        "device's SM count, not the partition's)")
    args = p.parse_args(argv[:i])
    args.program = argv[i + 1:]
    if not args.program:
        p.error("no program after --")
    if args.sms < 1:
        p.error("--sms must be positive")
    if args.tolerance is not None and not 0 <= args.tolerance < 1:
        p.error("--tolerance is relative: 0 <= REL < 1")
    for pattern in (args.stderr_match + args.confined_stdout_match +
                    args.confined_stderr_match):
        try:
            re.compile(pattern)
        except re.error as e:
            p.error(f"bad regular expression {pattern!r}: {e}")
    if not args.name:
        prog = args.program
        is_python = os.path.basename(prog[0]).startswith("python") and len(prog) > 1
        args.name = os.path.splitext(os.path.basename(prog[1] if is_python else prog[0]))[0]
    return args


def main(argv):
    args = parse(argv)
    record = {"name": args.name, "program": args.program, "sms": args.sms,
              "devices": args.devices, "tolerance": args.tolerance, "smid": args.smid,
              "strict": args.expect_report_clean, "real_sm_count": args.real_sm_count,
              "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}

    def finish(result, reason, problems=(), runs=()):
        record.update(result=result, reason=reason, problems=list(problems),
                      runs={r.kind: r.json() for r in runs})
        log = os.environ.get("GREENCTX_SEMANTICS_LOG")
        if log:
            try:
                with open(log, "a") as f:
                    f.write(json.dumps(record) + "\n")
            except OSError as e:
                print(f"check_run: cannot append to {log}: {e}", file=sys.stderr)
        print(f"{result.upper()}: {args.name}: {reason}")
        return {"pass": 0, "fail": 1, "skip": SKIP}[result]

    absent = gpu_absent(args.cli)
    if absent:
        print(f"check_run: {args.name}: skipped: {absent}", file=sys.stderr)
        return finish("skip", absent)
    if not os.access(args.cli, os.X_OK):
        return finish("fail", f"the greenctx CLI {args.cli} is not an executable file")

    env_plain = {k: v for k, v in os.environ.items()
                 if not k.startswith("GREENCTX_RUN_") and k != "GREENCTX_PRELOAD_DEBUG"}
    tmp = tempfile.mkdtemp(prefix=f"check_run-{args.name}-")
    devices = None
    if args.devices and args.devices != "all":
        try:
            devices = {int(d) for d in args.devices.split(",")}
        except ValueError:
            return finish("fail", f"--devices {args.devices}: not 'all' nor ordinals like 0,1")

    def command(kind):
        prog = [a.replace("{run}", kind) for a in args.program]
        if args.smid:
            prog += ["--smid-out", os.path.join(tmp, f"smid-{kind}.txt")]
        if kind == "plain":
            return prog
        cmd = [args.cli, "run", "--sms", str(args.sms)]
        if args.devices:
            cmd += [device_flag(args.cli), args.devices]
        if kind == "strict":
            cmd.append("--strict")
        if args.real_sm_count:
            cmd.append("--real-sm-count")
        return cmd + args.run_option + ["--"] + prog

    kinds = ["plain", "confined"] + (["strict"] if args.expect_report_clean else [])
    for kind in kinds if args.sm_count_file else ():  # no file of an earlier check is read
        try:
            os.remove(args.sm_count_file.replace("{run}", kind))
        except OSError:
            pass
    runs = []
    print(f"check_run: {args.name}: greenctx run --sms {args.sms}"
          f"{' --devices ' + args.devices if args.devices else ''} -- "
          f"{' '.join(args.program)}")
    for kind in kinds:
        r = run(kind, command(kind), args.timeout, env_plain if kind == "plain" else None)
        runs.append(r)
        if args.out_dir:
            os.makedirs(args.out_dir, exist_ok=True)
            for stream in ("stdout", "stderr"):
                with open(os.path.join(args.out_dir, f"{args.name}.{kind}.{stream}"), "w") as f:
                    f.write(getattr(r, stream))
        print(f"  {kind:<9} {r.exit_text():<18} {r.seconds:8.2f} s  "
              f"{len(r.stdout.splitlines())} lines on stdout")
        if kind == "plain" and r.rc == SKIP:
            why = r.stderr.strip().splitlines()
            reason = "the program skipped itself: " + (why[-1] if why else "(no reason given)")
            print(f"check_run: {args.name}: {reason}", file=sys.stderr)
            shutil.rmtree(tmp, ignore_errors=True)
            return finish("skip", reason, runs=runs)
        if kind == "plain" and r.rc != 0:
            print(f"  the plain run failed (not greenctx's doing); its stderr:\n{tail(r.stderr)}")
            print(f"  its stdout:\n{tail(r.stdout)}")
            shutil.rmtree(tmp, ignore_errors=True)
            return finish("fail", f"the plain run failed ({r.exit_text()})", runs=runs)

    plain = runs[0]
    problems = []
    for r in runs[1:]:
        if r.rc != args.confined_exit:
            what = f"the {r.kind} run failed ({r.exit_text()})"
            if args.confined_exit != 0:
                what = f"the {r.kind} run gave {r.exit_text()}, not exit {args.confined_exit}"
            if r.rc == STRICT_EXIT:
                what += ": --strict stopped it, a CUDA guarantee could not be kept"
            problems.append(what)
            print(f"  {r.kind} run's stderr:\n{tail(r.stderr) if r.stderr.strip() else '    (empty)'}")
        for stream, patterns in (("stdout", args.confined_stdout_match),
                                 ("stderr", args.confined_stderr_match)):
            problems += [f"the {r.kind} run's {stream} does not match {pat!r}" for pat in patterns
                         if not re.search(pat, getattr(r, stream), re.MULTILINE)]
        if args.confined_exit != 0:
            print(f"  {r.kind}: exit {args.confined_exit} expected; stdout not compared")
            continue
        diffs = compare(plain.stdout, r.stdout, args.tolerance)
        record[f"stdout_equal_{r.kind}"] = not diffs
        if diffs:
            problems.append(f"the {r.kind} run's stdout differs from the plain run's")
            for d in diffs[:20]:
                print(f"  {r.kind}: {d}")
            diff = list(difflib.unified_diff(plain.stdout.splitlines(), r.stdout.splitlines(),
                                             "plain", r.kind, lineterm="", n=2))
            print("\n".join("    " + x for x in diff[:200]))
            if r.rc == 0 and r.stderr.strip():
                print(f"  {r.kind} run's stderr:\n{tail(r.stderr)}")
        else:
            print(f"  {r.kind}: stdout "
                  f"{'identical' if args.tolerance is None else 'equal within ' + str(args.tolerance)}")

    for r in runs:
        missed = [pat for pat in args.stderr_match if not re.search(pat, r.stderr, re.MULTILINE)]
        problems += [f"the {r.kind} run's stderr does not match {pat!r}" for pat in missed]
        if missed:
            print(f"  {r.kind} run's stderr:\n{tail(r.stderr, 10) or '    (empty)'}")
    if args.sm_count_file:
        problems += check_sm_count_files(args, runs, record)

    if args.smid:
        try:
            plain_smid = read_smid(os.path.join(tmp, "smid-plain.txt"))
            confined_smid = read_smid(os.path.join(tmp, "smid-confined.txt"))
            smid_problems, summary = check_smid(plain_smid, confined_smid, args.sms, devices)
            print(f"  SMs: {summary}")
            record["smid_summary"] = summary
            record["smid_confined"] = {f"{n} {d}": sorted(s) for (n, d), s in
                                       confined_smid.items()}
            problems += smid_problems
            if args.expect_report_clean:
                strict_smid = read_smid(os.path.join(tmp, "smid-strict.txt"))
                more, _ = check_smid(plain_smid, strict_smid, args.sms, devices)
                problems += ["strict run: " + p for p in more]
        except (OSError, ValueError) as e:
            problems.append(f"--smid-out: {e}")
    shutil.rmtree(tmp, ignore_errors=True)

    for p in problems:
        print(f"  problem: {p}")
    if problems:
        return finish("fail", problems[0] + (f" (and {len(problems) - 1} more)"
                                              if len(problems) > 1 else ""), problems, runs)
    what = (f"plain and confined on {args.sms} SMs agree" if args.confined_exit == 0 else
            f"confined on {args.sms} SMs exits {args.confined_exit} as expected")
    return finish("pass", what + (", --strict clean" if args.expect_report_clean else ""),
                  runs=runs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
