#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: programs built for CUDA 13.1 with the CUDA 13.5 toolkit and its own cudart
# (scripts/binary-compat-build.sh, carried in build-gpu/binary-compat), run plain and through
# `greenctx run --cuda-13.1`, on the same driver, one after the other:
#   compat-tests-{static,shared}   the guide's examples as tests (gtest JSON of each run), also
#                                  through --cuda-13.1 --sms 64 (the program splits 64 SMs)
#   runtime-api-{static,shared}    examples/runtime_api.cu
#   driver-13-1                    the driver API of 13.1 by symbol (64 8 0: three groups)
#   cudart-probe                   the version cudart 13.5 is told and its first call
#   cuda-core-split                cuda.core (the machine's own) splitting 104+16 SMs, a
#                                  structured split (tests/toolkit/cuda_core_split.py), and 48+16
#                                  through --sms 64; cuda-core-refused: 112+16, which 13.1's rules
#                                  refuse on a GPU of 15 co-scheduled units of 8 (16 are needed)
# What each run through greenctx must do:
#   pass      exit 0, and no test skipped that the plain run ran (a runtime that cannot start
#             skips every test: that is no pass)
#   refused   exit 2 (the program's own for a refused split) and greenctx's refusal with the
#             requests that can be made instead on stderr
#   no-worse  a static runtime, which greenctx cannot reach (its 13.1 calls fail as plain; the
#             driver calls under it still meet greenctx's hooks): no test fails that passed
#             plain, no failure where plain exited 0, and stderr says it is out of reach
# Writes under $OUT (default ./binary-compat-out): a log per run (NAME.MODE.log, gtest
# NAME.MODE.json), environment.txt (GPU, driver, date, commit) and summary.json with each run's
# exit status, expectation and verdict and, for the tests, the counts and names of the failed and
# skipped ones. Exits 0 when every run through greenctx met its expectation, 1 otherwise, 77
# without a GPU. Each run has BINARY_COMPAT_TIMEOUT seconds (default 600).
#
#   GREENCTX_BUILD=build-gpu scripts/binary-compat-check.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=${GREENCTX_BUILD:-build-gpu}
programs=$bin/binary-compat
cli=$bin/tools/greenctx/greenctx
limit=${BINARY_COMPAT_TIMEOUT:-600}
. scripts/lib/timed-steps.sh
check_output binary-compat-out binary-compat.log
for f in "$cli" "$programs/compat-tests-static" "$programs/driver-13-1"; do
  [ -e "$f" ] || { echo "binary-compat-check: $f is missing (scripts/binary-compat-build.sh)"; exit 2; }
done
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "binary-compat-check: no GPU here"
  exit 77
fi
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  echo "commit $(cat "$bin/COMMIT" 2>/dev/null) programs $(cat "$programs/COMMIT") built with" \
       "$(cat "$programs/TOOLKIT")"
  echo "command: GREENCTX_BUILD=$bin scripts/binary-compat-check.sh"
} > "$out/environment.txt"
cat "$out/environment.txt"

# one NAME MODE EXPECT PROGRAM ARGS...: MODE plain, or the options of greenctx run after
# "through:"; EXPECT pass or no-worse (judged below, from the logs and the gtest JSON).
results=$out/results.jsonl
rm -f "$results"
one() {
  local name=$1 mode=$2 expect=$3; shift 3
  local tag=$name.${mode//[^a-z0-9]/_} cmd=("$@") rc
  case $mode in
    plain) ;;
    *) cmd=("$cli" run ${mode#through:} -- "$@") ;;
  esac
  case $name in compat-tests-*) cmd+=("--gtest_output=json:$out/$tag.json") ;; esac
  echo "=== $tag: ${cmd[*]}" | tee -a "$log"
  timeout -k 10 "$limit" "${cmd[@]}" > "$out/$tag.log" 2>&1
  rc=$?
  tail -n 3 "$out/$tag.log" | tee -a "$log"
  echo "=== $tag: exit $rc" | tee -a "$log"
  printf '{"name": "%s", "mode": "%s", "tag": "%s", "expect": "%s", "exit": %d}\n' \
    "$name" "$mode" "$tag" "$expect" "$rc" >> "$results"
}

for rt in static shared; do
  expect=pass
  [ $rt = static ] && expect=no-worse
  one "compat-tests-$rt" plain - "$programs/compat-tests-$rt"
  one "compat-tests-$rt" through:--cuda-13.1 $expect "$programs/compat-tests-$rt"
  one "runtime-api-$rt" plain - "$programs/runtime-api-$rt"
  one "runtime-api-$rt" through:--cuda-13.1 $expect "$programs/runtime-api-$rt"
done
one compat-tests-shared "through:--cuda-13.1 --sms 64" pass "$programs/compat-tests-shared"
one driver-13-1 plain - "$programs/driver-13-1" 64 8 0
one driver-13-1 through:--cuda-13.1 pass "$programs/driver-13-1" 64 8 0
one driver-13-1 "through:--cuda-13.1 --sms 64" pass "$programs/driver-13-1" 16 8 0
one cudart-probe plain - "$programs/cudart-probe"
one cudart-probe through:--cuda-13.1 pass "$programs/cudart-probe"
split=tests/toolkit/cuda_core_split.py
one cuda-core-split plain - python3 "$split" 104,16
one cuda-core-split through:--cuda-13.1 pass python3 "$split" 104,16
one cuda-core-split "through:--cuda-13.1 --sms 64" pass python3 "$split" 48,16
one cuda-core-refused plain - python3 "$split" 112,16
one cuda-core-refused through:--cuda-13.1 refused python3 "$split" 112,16

python3 - "$out" <<'PY' || failed+=("through greenctx (summary.json)")
import json, os, re, sys
out = sys.argv[1]
runs = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
for r in runs:
    path = os.path.join(out, r["tag"] + ".json")
    if os.path.exists(path):
        cases = [t for s in json.load(open(path)).get("testsuites", []) for t in s.get("testsuite", [])]
        r["tests"] = len(cases)
        r["failed"] = sorted(t["classname"] + "." + t["name"] for t in cases if t.get("failures"))
        r["skipped"] = sorted(t["classname"] + "." + t["name"] for t in cases
                              if t.get("result") == "SKIPPED")
plain = {r["name"]: r for r in runs if r["mode"] == "plain"}
ok = True
for r in runs:
    if r["mode"] == "plain":
        r["verdict"] = "reference"
        continue
    base, why = plain[r["name"]], []
    log = open(os.path.join(out, r["tag"] + ".log"), errors="replace").read()
    if r["expect"] == "pass":
        if r["exit"] != 0:
            why.append(f"exit {r['exit']}")
        if "tests" in r:
            if r["tests"] == 0:
                why.append("no tests ran")
            extra = sorted(set(r["skipped"]) - set(base.get("skipped", [])))
            # Confined to N SMs, a test written for the whole GPU's count skips, saying so.
            sms = re.search(r"--sms ([0-9]+)", r["mode"])
            reasons = dict((m.group(2), m.group(1)) for m in re.finditer(
                r"Skipped\n(.*)\n\[  SKIPPED \] (\S+) \(", log))
            r["skipped_for_sm_count"] = [t for t in extra if sms and
                                         f"this GPU has {sms.group(1)}" in reasons.get(t, "")]
            extra = [t for t in extra if t not in r["skipped_for_sm_count"]]
            if extra:
                why.append(f"{len(extra)} tests skipped that ran plain: {', '.join(extra)}")
        if r["name"] == "cudart-probe" and not re.search(r"devices [1-9][0-9]* \(0\)", log):
            why.append("the runtime did not start")
    elif r["expect"] == "refused":
        if r["exit"] != 2:
            why.append(f"exit {r['exit']}, not 2")
        if "requests that can be made here" not in log:
            why.append("stderr does not say which requests can be made")
    else:  # no-worse: a static runtime greenctx cannot reach
        if base["exit"] == 0 and r["exit"] != 0:
            why.append(f"exit {r['exit']}, plain 0")
        worse = sorted(set(r.get("failed", [])) - set(base.get("failed", [])))
        if worse:
            why.append(f"{len(worse)} tests failed that passed plain: {', '.join(worse)}")
        if "linked in statically" not in log:
            why.append("stderr does not say the static runtime is out of reach")
    r["verdict"] = "met" if not why else "NOT MET: " + "; ".join(why)
    ok = ok and not why
json.dump({"environment": open(os.path.join(out, "environment.txt")).read().splitlines(),
           "runs": runs}, open(os.path.join(out, "summary.json"), "w"), indent=1)
for r in runs:
    extra = (f" tests {r['tests']} failed {len(r['failed'])} skipped {len(r['skipped'])}"
             if "tests" in r else "")
    print(f"{r['name']:20} {r['mode']:30} exit {r['exit']:3}{extra}  {r['verdict']}")
sys.exit(0 if ok else 1)
PY
finish_checks "binary compatibility (greenctx run --cuda-13.1)"
