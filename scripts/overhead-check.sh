#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What `greenctx run` costs per launch when it confines a program to all of the GPU's SMs, as a
# benchmark (the target: at most 2% per launch, on the legacy, a blocking and a
# non-blocking stream). For the GPU machine: run from the repository root with a build folder made
# beforehand (GREENCTX_BUILD, default build) holding tools/greenctx/greenctx, its preload library
# and tests/greenctx_run_overhead (tests/run/overhead.cu, which knows nothing of greenctx).
#
# OVERHEAD_ROUNDS rounds (default 10). In each round, for each stream kind, four processes one
# after another, their order rotated from round to round (and the stream kinds' order too):
#   plain      the program alone
#   confined   greenctx run --sms <sm_count of greenctx info --json> -- PROGRAM
#   hooks      the preload library loaded and active, confining nothing: LD_PRELOAD=<library>
#              GREENCTX_RUN_SMS=<all> GREENCTX_RUN_DEVICES=63 (a device that does not exist;
#              greenctx run itself refuses --device 1 on a one-GPU machine)
#   own        PROGRAM --own-green-context: the program's own green context over all SMs, no
#              preload library: the driver's own cost, which greenctx cannot remove
# Each process times its launches itself (start-up excluded): a warm-up, then repetitions of empty
# kernel launches, and prints the median; then the same for cudaStreamQuery. Once per round, SGEMM
# plain and confined (the kernels themselves: x1.000 expected). After the rounds, per stream kind,
# benchmarks/launch_pairs.cu compares inside one process, block against block: the driver's green
# context against the primary context (plain), and the hooked cuLaunchKernel against libcuda's
# own (plain: a control, the same function twice; hooks alone; confined).
#
# Writes under $OUT (default ./overhead-out):
#   overhead-samples.jsonl  one line per process: round, stream, configuration, exit, its JSON line
#                           (the paired runs: round 0, mode pairs-contexts or pairs-hooks)
#   overhead.json           the summary (scripts/overhead-summary.py): per stream kind and
#                           configuration the median over rounds of the in-process medians, the
#                           round-by-round ratios with their quartiles, the verdict, the machine
#   overhead.md             the same for people (also printed)
#   meta.json, info.json    the environment, settings and commands; greenctx info --json
#   logs/stderr.log         every process's stderr, each after a line naming the run
# Exits 0 when everything ran (the verdict is a result, not a pass or fail), 1 when a run failed or
# ran in the wrong context, 2 when the build is incomplete, 77 without a GPU.
#
# Settings (environment): OVERHEAD_ROUNDS (10), OVERHEAD_STREAMS ("legacy blocking nonblocking",
# the three; add per-thread for cudaStreamPerThread, about 70 s more),
# OVERHEAD_PAIRS (150 pairs of blocks per paired run, 0: none; about 40 s for the three stream
# kinds), OVERHEAD_REPETITIONS (7), OVERHEAD_LAUNCHES (20000 per repetition), OVERHEAD_QUERIES (20000 per
# repetition), OVERHEAD_WARMUP (3000), OVERHEAD_GEMM ("8192 10", N and iterations; empty: no
# SGEMM), OVERHEAD_RUN_TIMEOUT (120 s per process), OVERHEAD_PREFIX (a command put before every
# run, e.g. "taskset -c 2"). With the defaults: 140 processes, about 4.5 minutes on the H200.
#
#   GREENCTX_BUILD=build-gpu scripts/overhead-check.sh
set -uo pipefail
export LC_ALL=C # decimal points in the numbers it writes
cd "$(dirname "$0")/.." || exit 2
out="${OUT:-$PWD/overhead-out}"
bin="${GREENCTX_BUILD:-build}"
rounds=${OVERHEAD_ROUNDS:-10}
read -r -a streams <<< "${OVERHEAD_STREAMS:-legacy blocking nonblocking}"
reps=${OVERHEAD_REPETITIONS:-7}
launches=${OVERHEAD_LAUNCHES:-20000}
queries=${OVERHEAD_QUERIES:-20000}
warmup=${OVERHEAD_WARMUP:-3000}
pairs=${OVERHEAD_PAIRS:-150}
read -r -a gemm_args <<< "${OVERHEAD_GEMM-8192 10}"
limit=${OVERHEAD_RUN_TIMEOUT:-120}
read -r -a prefix <<< "${OVERHEAD_PREFIX:-}"
cli="$bin/tools/greenctx/greenctx"
prog="$bin/tests/greenctx_run_overhead"
pairs_prog="$bin/benchmarks/greenctx_launch_pairs"
program=$prog # the program command_of runs
preload="$bin/tools/greenctx/libgreenctx_preload.so"
configs=(plain confined hooks own)

for v in "$rounds" "$reps" "$launches" "$queries" "$warmup" "$limit" "$pairs"; do
  if ! [[ $v =~ ^[0-9]+$ ]] || [ "$v" -lt 0 ]; then
    echo "overhead-check: '$v' is not a whole number (OVERHEAD_* settings)" >&2
    exit 2
  fi
done
if [ "$rounds" -lt 1 ] || [ ${#streams[@]} -eq 0 ]; then
  echo "overhead-check: nothing to run (OVERHEAD_ROUNDS=$rounds, OVERHEAD_STREAMS empty?)" >&2
  exit 2
fi
[ "$rounds" -ge 10 ] || echo "overhead-check: $rounds rounds, fewer than 10" >&2
missing=()
for f in "$cli" "$prog"; do [ -x "$f" ] || missing+=("$f"); done
[ -f "$preload" ] || missing+=("$preload")
if [ ${#missing[@]} -gt 0 ]; then
  echo "overhead-check: missing from $bin: ${missing[*]}" >&2
  echo "build them: cmake --build $bin --target greenctx_cli greenctx_preload" \
       "greenctx_run_overhead" >&2
  exit 2
fi
preload=$(realpath "$preload")

# Variables a greenctx run around this one (or a stale shell) left would change the plain runs.
while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(GREENCTX_RUN_[A-Z_]*\)=.*/\1/p')

if ! command -v nvidia-smi > /dev/null || ! "$cli" info > /dev/null 2>&1; then
  echo "overhead-check: no GPU here (nvidia-smi absent or greenctx info failed): nothing to measure" >&2
  exit 77
fi
mkdir -p "$out/logs"
samples="$out/overhead-samples.jsonl"
log="$out/logs/stderr.log"
: > "$samples"
: > "$log"
"$cli" info --json - > "$out/info.json" 2>> "$log"
sms=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["tables"]["gpus"]["rows"][0]["sm_count"])' \
      "$out/info.json" 2>> "$log")
if ! [[ $sms =~ ^[0-9]+$ ]]; then
  echo "overhead-check: greenctx info --json gave no sm_count (see $out/info.json)" >&2
  exit 1
fi

launch_args() { # launch_args STREAM: the program's arguments in launch mode
  echo launch --stream "$1" --repetitions "$reps" --launches "$launches" --queries "$queries" \
    --warmup "$warmup"
}
command_of() { # command_of CONFIG ARGS...: sets cmd, the command line of one run of $program
  local config=$1; shift
  case $config in
    plain) cmd=("$program" "$@") ;;
    confined) cmd=("$cli" run --sms "$sms" -- "$program" "$@") ;;
    hooks) cmd=(env "LD_PRELOAD=$preload${LD_PRELOAD:+:$LD_PRELOAD}" "GREENCTX_RUN_SMS=$sms"
                GREENCTX_RUN_DEVICES=63 "$program" "$@") ;;
    own) cmd=("$program" "$@" --own-green-context) ;;
  esac
  cmd=("${prefix[@]}" "${cmd[@]}")
}

failed=()
seq=0
unsupported=0
run_one() { # run_one ROUND MODE STREAM CONFIG ARGS...
  local round=$1 mode=$2 stream=$3 config=$4; shift 4
  command_of "$config" "$@"
  seq=$((seq + 1))
  printf '=== round %s, %s, %s stream, %s: %s\n' "$round" "$mode" "$stream" "$config" \
    "${cmd[*]}" >> "$log"
  local start line rc wall
  start=$(date +%s.%N)
  local err
  err=$(mktemp)
  line=$(timeout -k 5 "$limit" "${cmd[@]}" 2> "$err")
  rc=$?
  cat "$err" >> "$log"
  # Under greenctx run the program cannot tell it is confined (its stream names no green
  # context): the library's summary says when nothing was confined.
  if [ "$config" = confined ] && [ $rc -eq 0 ] &&
     grep -q "never used CUDA\|never made a confined device's context current" "$err"; then
    echo "(greenctx run confined nothing)" >> "$log"
    rc=5
  fi
  rm -f "$err"
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
  if [ $rc -eq 0 ] && [[ $line != "{"*"}" ]]; then
    echo "(exit 0 but no JSON line on stdout: '$line')" >> "$log"
    rc=1
  fi
  [ $rc -eq 0 ] || line=null
  printf '{"seq":%d,"round":%d,"mode":"%s","stream":"%s","config":"%s","exit":%d,"wall_s":%.3f,"result":%s}\n' \
    "$seq" "$round" "$mode" "$stream" "$config" "$rc" "$wall" "$line" >> "$samples"
  case $rc in
    0) ;;
    4) unsupported=$((unsupported + 1)) ;; # this driver cannot do it (said in the summary)
    77) echo "overhead-check: the program found no GPU (exit 77)" >&2; exit 77 ;;
    *) failed+=("round $round $mode $stream $config (exit $rc)")
       echo "overhead-check: round $round $mode $stream $config failed (exit $rc); see $log" >&2 ;;
  esac
}

# The estimate: ~4 us a launch, ~0.5 us a query, and a guess of 1.2 s of start-up per process
# (greenctx run checks the request in a child with the driver first); an SGEMM process ~2.5 s.
processes=$((rounds * (${#streams[@]} * ${#configs[@]} + (${#gemm_args[@]} ? 2 : 0))))
estimate=$(awk -v r="$rounds" -v p="$((${#streams[@]} * ${#configs[@]}))" -v w="$warmup" \
  -v n="$reps" -v l="$launches" -v q="$queries" -v g="$((${#gemm_args[@]} > 0))" \
  'BEGIN { printf "%.0f", r * (p * ((w + n * l) * 4e-6 + n * q * 0.5e-6 + 1.2) + g * 2 * 2.5) }')
echo "overhead-check: $rounds rounds, $processes processes, about $estimate s" \
  "(4 us a launch, 0.5 us a query, 1.2 s of start-up a process, 2.5 s an SGEMM process)"

started=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
  n=${#streams[@]}
  for ((k = 0; k < n; k++)); do
    stream=${streams[$(((k + r - 1) % n))]}
    read -r -a args <<< "$(launch_args "$stream")"
    for ((c = 0; c < ${#configs[@]}; c++)); do
      run_one "$r" launch "$stream" "${configs[$(((c + r - 1 + k) % ${#configs[@]}))]}" "${args[@]}"
    done
  done
  if [ ${#gemm_args[@]} -gt 0 ]; then
    if [ $((r % 2)) -eq 1 ]; then order=(plain confined); else order=(confined plain); fi
    for config in "${order[@]}"; do run_one "$r" gemm legacy "$config" gemm "${gemm_args[@]}"; done
  fi
  if [ "$r" -eq 1 ]; then
    took=$(($(date +%s) - started))
    echo "overhead-check: round 1 took ${took} s: about $((took * rounds)) s in all"
  fi
done
echo "overhead-check: $(($(date +%s) - started)) s for $seq processes"

# The parts of a launch's cost inside one process (benchmarks/launch_pairs.cu), block against block,
# which the noise between processes leaves out: the hooks against the driver's own function
# (plain: the method's control, the same function twice), and the driver's green context
# against the primary context.
if [ "$pairs" -gt 0 ] && [ -x "$pairs_prog" ]; then
  program=$pairs_prog
  for stream in "${streams[@]}"; do
    pargs=(--stream "$stream" --pairs "$pairs")
    run_one 0 pairs-contexts "$stream" plain contexts "${pargs[@]}"
    for config in plain hooks confined; do
      run_one 0 pairs-hooks "$stream" "$config" hooks "${pargs[@]}"
    done
  done
  program=$prog
  echo "overhead-check: paired blocks done, $(($(date +%s) - started)) s in all"
elif [ "$pairs" -gt 0 ]; then
  echo "overhead-check: $pairs_prog is missing: no paired blocks (build greenctx_launch_pairs)" >&2
fi

# The environment and the exact commands, for the summary.
commands=()
read -r -a args <<< "$(launch_args STREAM)"
for config in "${configs[@]}"; do
  command_of "$config" "${args[@]}"
  commands+=("$(printf '%q ' "${cmd[@]}")")
done
if [ ${#gemm_args[@]} -gt 0 ]; then
  for config in plain confined; do
    command_of "$config" gemm "${gemm_args[@]}"
    commands+=("$(printf '%q ' "${cmd[@]}")")
  done
fi
if [ "$pairs" -gt 0 ]; then
  program=$pairs_prog
  command_of plain contexts --stream STREAM --pairs "$pairs"
  commands+=("$(printf '%q ' "${cmd[@]}")")
  for config in plain hooks confined; do
    command_of "$config" hooks --stream STREAM --pairs "$pairs"
    commands+=("$(printf '%q ' "${cmd[@]}")")
  done
  program=$prog
fi
OV_GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null) \
OV_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null) \
OV_CPU=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) \
OV_CORES=$(nproc) \
OV_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) \
OV_COMMIT=$(cat "$bin/COMMIT" 2>/dev/null || git describe --always --dirty 2>/dev/null || echo unknown) \
OV_SMS=$sms OV_ROUNDS=$rounds OV_REPS=$reps OV_LAUNCHES=$launches OV_QUERIES=$queries \
OV_WARMUP=$warmup OV_PAIRS=$pairs OV_GEMM="${gemm_args[*]}" OV_STREAMS="${streams[*]}" OV_PREFIX="${prefix[*]}" \
python3 - "$out/meta.json" "${commands[@]}" <<'PY'
import json, os, sys
e = os.environ
meta = {
    "environment": {"gpu": e["OV_GPU"], "driver": e["OV_DRIVER"], "sm_count": int(e["OV_SMS"]),
                    "cpu": e["OV_CPU"], "cpu_cores": int(e["OV_CORES"]), "date": e["OV_DATE"],
                    "commit": e["OV_COMMIT"]},
    "settings": {"rounds": int(e["OV_ROUNDS"]), "streams": e["OV_STREAMS"].split(),
                 "repetitions": int(e["OV_REPS"]), "launches": int(e["OV_LAUNCHES"]),
                 "queries": int(e["OV_QUERIES"]), "warmup": int(e["OV_WARMUP"]),
                 "pairs": int(e["OV_PAIRS"]),
                 "gemm": e["OV_GEMM"], "prefix": e["OV_PREFIX"],
                 "order": "per round r (from 1) and stream kind k (from 0): configurations "
                          "plain, confined, hooks, own rotated left by r - 1 + k; stream kinds "
                          "rotated by r - 1; SGEMM plain first in odd rounds"},
    "commands": [c.strip() for c in sys.argv[2:]],
}
json.dump(meta, open(sys.argv[1], "w"), indent=2)
PY

python3 scripts/overhead-summary.py "$samples" "$out/meta.json" "$out"
case $? in
  0) ;;
  1) failed+=("runs in the wrong context (see overhead.md)") ;;
  *) failed+=("the summary (overhead-summary.py)") ;;
esac
[ "$unsupported" -eq 0 ] || echo "overhead-check: $unsupported runs unsupported by this driver (exit 4): see overhead.md"

echo
if [ ${#failed[@]} -eq 0 ]; then
  echo "OVERHEAD CHECK RAN: $out/overhead.md"
else
  echo "OVERHEAD CHECK: RUNS FAILED: ${failed[*]}"
  exit 1
fi
