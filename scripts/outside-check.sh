#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# greenctx run confines programs from outside the project: JAX, CuPy, numba-cuda, Triton,
# torch.compile, transformers, cuda.core, CUDA IPC (tests/run/outside/), and the CUDA programs
# sm_count, coop_grid_sync, persistent_barrier and clusters (tests/run/), each run plain and under
# `greenctx run --sms N` (then again with --strict) by tests/run/check_run.py, which needs the same
# exit status and stdout. Confinement is checked by %smid (--smid) where a program records it, and
# by tests/run/outside/fill.py in the frameworks' programs (their stderr must say the work waited
# for a fill of the SMs the device reports). The SM counts the programs read must be N confined,
# the device's own plain. Clusters: 8 at --sms N, 16 at --sms $OUTSIDE_CLUSTER16_SMS, and 16 at
# --sms N, where the confined launch must fail with CUDA's error (exit 3) and greenctx must say why.
# For the GPU machine: run from the repository root with a build folder (GREENCTX_BUILD, default
# build/) holding tools/greenctx/greenctx, its preload library and tests/greenctx_run_*; numba gets
# numpy 2.2 from .whl/numpy-2.2*.whl (numba-cuda 0.30 fails with numpy 2.5), installed into a temporary folder.
# Writes under $OUT (or ./outside-out):
#   summary.txt      the table printed last: one line per check
#   outside.jsonl    check_run.py's JSON line per check
#   logs/            each check's console output and each run's stdout and stderr
#   sm_count*-*.txt  the SM counts each run read
# Exits 0 when every check passed, 1 if any failed (a skipped check counts as failed unless
# OUTSIDE_ALLOW_SKIP=1: every framework is expected there), 2 if the build is incomplete, 77
# without a GPU. Settings: OUTSIDE_SMS (16), OUTSIDE_CLUSTER16_SMS (132), OUTSIDE_STEP_TIMEOUT
# (900 s per check, three runs), OUTSIDE_ONLY (names of the checks to run, e.g. "jax_mlp
# clusters_8"; default all), OUTSIDE_NUMPY_WHEEL (default .whl/numpy-2.2*.whl), PYTHON (python3),
# OUTSIDE_RUN_OPTIONS (more options of every `greenctx run`, e.g. "--cuda-13.1": no library may
# take another path because of what the option changes).
#
#   GREENCTX_BUILD=build-gpu scripts/outside-check.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out="${OUT:-$PWD/outside-out}"
bin="${GREENCTX_BUILD:-build}"
cli="$bin/tools/greenctx/greenctx"
t="$bin/tests"
o=tests/run/outside
py="${PYTHON:-python3}"
sms=${OUTSIDE_SMS:-16}
c16=${OUTSIDE_CLUSTER16_SMS:-132}
limit=${OUTSIDE_STEP_TIMEOUT:-900}
mkdir -p "$out/logs"
export GREENCTX_SEMANTICS_LOG="$out/outside.jsonl"
rm -f "$GREENCTX_SEMANTICS_LOG" "$out/summary.txt" "$out"/sm_count*-*.txt

programs=("$t"/greenctx_run_{sm_count,coop_grid_sync,persistent_barrier,clusters})
missing=()
for f in "$cli" "$bin/tools/greenctx/libgreenctx_preload.so" "${programs[@]}"; do
  [ -e "$f" ] || missing+=("$f")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "outside-check: missing from $bin: ${missing[*]}" >&2
  echo "build them: cmake --build $bin --target greenctx_cli greenctx_preload" \
       "greenctx_run_{sm_count,coop_grid_sync,persistent_barrier,clusters}" >&2
  exit 2
fi
if ! command -v nvidia-smi > /dev/null || ! "$cli" info > /dev/null 2>&1; then
  echo "outside-check: no GPU here (nvidia-smi absent or greenctx info failed): nothing to check" >&2
  exit 77
fi

{
  echo "greenctx outside check, $(date -u +%Y-%m-%dT%H:%M:%SZ), --sms $sms, clusters of 16 at --sms $c16"
  echo "commit: $(cat "$bin/COMMIT" 2>/dev/null || git describe --always --dirty 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=index,name,driver_version --format=csv 2>&1
  "$py" - <<'PY' 2>&1
import importlib.metadata as m, sys
names = ["numpy", "torch", "triton", "jax", "jaxlib", "cupy-cuda13x", "numba", "numba-cuda",
         "transformers", "cuda-core", "cuda-bindings"]
def version(n):
    try:
        return m.version(n)
    except m.PackageNotFoundError:
        return "absent"
print(f"python {sys.version.split()[0]}: " + ", ".join(f"{n} {version(n)}" for n in names))
PY
} | tee "$out/logs/environment.txt"

wanted() { [ -z "${OUTSIDE_ONLY:-}" ] || [[ " $OUTSIDE_ONLY " == *" $1 "* ]]; }
# A check that did not run (say, numba without its numpy): a failed line of the JSON log.
not_run() { # not_run NAME REASON
  wanted "$1" || return 0
  "$py" -c 'import json, sys; print(json.dumps({"name": sys.argv[1], "result": "fail",
            "reason": sys.argv[2], "runs": {}}))' "$1" "$2" >> "$GREENCTX_SEMANTICS_LOG"
  echo "FAIL: $1: $2"
}
check() { # check NAME HARNESS-OPTIONS... -- PROGRAM ARGS...
  local name=$1; shift
  wanted "$name" || return 0
  local extra=() option
  for option in ${OUTSIDE_RUN_OPTIONS:-}; do extra+=("--run-option=$option"); done
  timeout -k 10 "$limit" "$py" tests/run/check_run.py --cli "$cli" --name "$name" \
    --timeout $(( limit / 3 - 10 )) --out-dir "$out/logs" "${extra[@]}" "$@" \
    > "$out/logs/$name.log" 2>&1
  local rc=$?
  tail -n 1 "$out/logs/$name.log"
  case $rc in
    0) ;;
    77) ;; # the line above says why; the table counts it
    *) sed -n '1,60p' "$out/logs/$name.log"
       if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then # killed: the harness wrote no line
         not_run "$name" "the check ran past $limit s"
       fi ;;
  esac
}

# The frameworks: stdout compared (floats within 1e-5, see each program), and fill.py's verdict.
waited='^fill: .*: work waited for the fill'
check jax_mlp --sms "$sms" --tolerance 1e-5 --expect-report-clean --stderr-match "$waited" \
  -- "$py" $o/jax_mlp.py
check cupy_kernels --sms "$sms" --tolerance 1e-5 --smid --expect-report-clean \
  --stderr-match "$waited" -- "$py" $o/cupy_kernels.py
np22="${TMPDIR:-/tmp}/greenctx-outside-numpy-2.2" # not under $OUT: results only there
wheel=${OUTSIDE_NUMPY_WHEEL:-}
for w in .whl/numpy-2.2*.whl; do [ -z "${OUTSIDE_NUMPY_WHEEL:-}" ] && [ -e "$w" ] && wheel=$w; done
if ! wanted numba_kernels && ! wanted sm_count_numba; then
  : # neither numba check asked for
elif [ -z "$wheel" ] || [ ! -e "$wheel" ]; then
  for n in numba_kernels sm_count_numba; do
    not_run "$n" "no .whl/numpy-2.2*.whl: numba-cuda 0.30 fails with numpy 2.5, it needs numpy 2.2"
  done
elif ! { rm -rf "$np22" &&
         { "$py" -m pip install -q --no-index --no-deps --target "$np22" "$wheel" ||
           "$py" -m zipfile -e "$wheel" "$np22"; } &&
         PYTHONPATH="$np22" "$py" -c 'import numpy; print("numpy", numpy.__version__, numpy.__file__)
assert numpy.__version__.startswith("2.2."), "not numpy 2.2"'; } > "$out/logs/numpy-2.2.log" 2>&1
then
  for n in numba_kernels sm_count_numba; do
    not_run "$n" "$wheel did not install (logs/numpy-2.2.log)"
  done
else
  PYTHONPATH="$np22${PYTHONPATH:+:$PYTHONPATH}" check numba_kernels --sms "$sms" \
    --expect-report-clean --stderr-match "$waited" -- "$py" $o/numba_kernels.py
  PYTHONPATH="$np22${PYTHONPATH:+:$PYTHONPATH}" check sm_count_numba --sms "$sms" \
    --expect-report-clean --sm-count-file "$out/sm_count_numba-{run}.txt" \
    -- "$py" $o/sm_count.py --routes numba --out "$out/sm_count_numba-{run}.txt"
fi
check triton_kernels --sms "$sms" --tolerance 1e-5 --expect-report-clean \
  --stderr-match "$waited" -- "$py" $o/triton_kernels.py
check torch_compile --sms "$sms" --tolerance 1e-5 --expect-report-clean \
  --stderr-match "$waited" -- "$py" $o/torch_compile.py
# 30 fp32 training steps: cuBLAS picks other GEMM kernels for 16 SMs (it reads the SM count), and
# the rounding differences grow with the steps (measured on the H200, 2026-12-01: 1.2e-5 relative
# by step 30, tokens identical), hence 1e-4.
check transformers_gpt2 --sms "$sms" --tolerance 1e-4 --expect-report-clean \
  --stderr-match "$waited" -- "$py" $o/transformers_gpt2.py
check cuda_core_launch --sms "$sms" --smid --expect-report-clean --stderr-match "$waited" \
  -- "$py" $o/cuda_core_launch.py
check cuda_ipc --sms "$sms" --expect-report-clean -- "$py" $o/cuda_ipc.py
check sm_count_py --sms "$sms" --expect-report-clean --sm-count-file "$out/sm_count_py-{run}.txt" \
  -- "$py" $o/sm_count.py --routes torch,cupy,triton,jax,cuda.core --out "$out/sm_count_py-{run}.txt"

# The CUDA programs.
check sm_count --sms "$sms" --expect-report-clean --sm-count-file "$out/sm_count-{run}.txt" \
  -- "$t/greenctx_run_sm_count" --out "$out/sm_count-{run}.txt"
check coop_grid_sync --sms "$sms" --smid --expect-report-clean -- "$t/greenctx_run_coop_grid_sync"
check persistent_barrier --sms "$sms" --smid --expect-report-clean \
  -- "$t/greenctx_run_persistent_barrier"
check clusters_8 --sms "$sms" --smid --expect-report-clean -- "$t/greenctx_run_clusters" 8
check clusters_16 --sms "$c16" --expect-report-clean -- "$t/greenctx_run_clusters" 16
# A cluster of 16 does not fit 16 SMs: CUDA's error, exit 3, and greenctx's word on stderr.
check clusters_16_too_big --sms "$sms" --confined-exit 3 \
  --confined-stdout-match 'launch failed: cudaError' \
  --confined-stderr-match '(?im)^greenctx run:.*cluster' -- "$t/greenctx_run_clusters" 16

# The table, from the harness's JSON lines; and the verdict.
echo
"$py" - "$GREENCTX_SEMANTICS_LOG" "${OUTSIDE_ALLOW_SKIP:-0}" <<'PY' | tee "$out/summary.txt"
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
allow_skip = sys.argv[2] == "1"
def run(d, kind):
    r = d["runs"].get(kind)
    return "-" if r is None else f"exit {r['exit']} {r['seconds']:.1f}s"
table = [("check", "result", "plain", "confined", "strict", "why")]
bad = 0
for d in rows:
    result = d["result"].upper()
    bad += result == "FAIL" or (result == "SKIP" and not allow_skip)
    table.append((d["name"], result, run(d, "plain"), run(d, "confined"), run(d, "strict"),
                  "" if result == "PASS" else d["reason"][:110]))
widths = [max(len(row[i]) for row in table) for i in range(5)]
for row in table:
    print("  ".join(c.ljust(w) for c, w in zip(row, widths)) + "  " + row[5])
passed = sum(d["result"] == "pass" for d in rows)
print(f"\n{passed} passed, {bad} failed" + ("" if allow_skip else " (a skip counts as failed)"))
print("OUTSIDE CHECK " + ("PASSED" if bad == 0 and rows else "FAILED"))
sys.exit(0 if bad == 0 and rows else 1)
PY
exit "${PIPESTATUS[0]}"
