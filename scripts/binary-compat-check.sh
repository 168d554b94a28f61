#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# On the GPU machine: programs built for CUDA 13.1 with the CUDA 13.5 toolkit and its own cudart
# (scripts/binary-compat-build.sh, carried in build-gpu/binary-compat), run plain and through
# `greenctx run --cuda-13.1`, on the same driver, one after the other:
#   compat-tests-{static,shared}   the guide's examples as tests (gtest JSON of each run), also
#                                  through --cuda-13.1 --sms 64 (the program splits 64 SMs)
#   runtime-api-{static,shared}    examples/runtime_api.cu
#   driver-13-1                    the driver API of 13.1 by symbol (64 8 0: three groups)
#   cudart-probe                   the version cudart 13.5 is told
# Writes under $OUT (default ./binary-compat-out): a log per run (NAME.MODE.log, gtest
# NAME.MODE.json), environment.txt (GPU, driver, date, commit) and summary.json with each run's
# exit status and, for the tests, the counts and names of the failed ones. Exits 0 when every run
# through greenctx passed, 1 otherwise, 77 without a GPU. Each run has BINARY_COMPAT_TIMEOUT
# seconds (default 600).
#
#   GREENCTX_BUILD=build-gpu scripts/binary-compat-check.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=${GREENCTX_BUILD:-build-gpu}
programs=$bin/binary-compat
cli=$bin/tools/greenctx/greenctx
out=${OUT:-$PWD/binary-compat-out}
limit=${BINARY_COMPAT_TIMEOUT:-600}
mkdir -p "$out"
log=$out/binary-compat.log
failed=()
source scripts/lib/timed-steps.sh
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

# one NAME MODE PROGRAM ARGS...: MODE plain, or the options of greenctx run after "through:".
results=$out/results.jsonl
rm -f "$results"
one() {
  local name=$1 mode=$2; shift 2
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
  printf '{"name": "%s", "mode": "%s", "exit": %d}\n' "$name" "$mode" "$rc" >> "$results"
  [ "$mode" = plain ] || [ "$rc" -eq 0 ] || failed+=("$tag (exit $rc)")
}

for rt in static shared; do
  one "compat-tests-$rt" plain "$programs/compat-tests-$rt"
  one "compat-tests-$rt" through:--cuda-13.1 "$programs/compat-tests-$rt"
  one "runtime-api-$rt" plain "$programs/runtime-api-$rt"
  one "runtime-api-$rt" through:--cuda-13.1 "$programs/runtime-api-$rt"
done
one compat-tests-static "through:--cuda-13.1 --sms 64" "$programs/compat-tests-static"
one driver-13-1 plain "$programs/driver-13-1" 64 8 0
one driver-13-1 through:--cuda-13.1 "$programs/driver-13-1" 64 8 0
one driver-13-1 "through:--cuda-13.1 --sms 64" "$programs/driver-13-1" 16 8 0
one cudart-probe plain "$programs/cudart-probe"
one cudart-probe through:--cuda-13.1 "$programs/cudart-probe"

python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
runs = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
for r in runs:
    tag = r["name"] + "." + "".join(c if c.isalnum() else "_" for c in r["mode"].lower())
    path = os.path.join(out, tag + ".json")
    if os.path.exists(path):
        j = json.load(open(path))
        cases = [t for s in j.get("testsuites", []) for t in s.get("testsuite", [])]
        r["tests"] = len(cases)
        r["failed"] = sorted(t["classname"] + "." + t["name"] for t in cases if t.get("failures"))
        r["skipped"] = sum(1 for t in cases if t.get("result") == "SKIPPED")
json.dump({"environment": open(os.path.join(out, "environment.txt")).read().splitlines(),
           "runs": runs}, open(os.path.join(out, "summary.json"), "w"), indent=1)
for r in runs:
    extra = f" tests {r['tests']} failed {len(r['failed'])}" if "tests" in r else ""
    print(f"{r['name']:22} {r['mode']:32} exit {r['exit']}{extra}")
PY
finish_checks "binary compatibility (greenctx run --cuda-13.1)"
