#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The benchmark across processes: a critical process (benchmarks/process_pair.cu
# critical: 16-block, 20-us kernels every 200 us, each timed launch to completion) beside a
# background process that floods its SMs (process_pair background), in each placement:
#
#   no MPS         alone           the critical process alone, whole GPU
#                  bg-alone        the background alone, whole GPU (its throughput on all SMs)
#                  timeslice       both on the whole GPU: they take turns
#   MPS            mps-alone       the critical process alone, whole GPU, an MPS client
#   (a daemon of   piece-alone     the critical process alone on piece 0 of 16,rest
#   its own)       bg-piece-alone  the background alone on piece 1 of 16,rest
#                  mps-share       both on the whole GPU
#                  mps-percentage  the background with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=88
#                                  (116 of 132 SMs' worth), the critical process on the whole GPU
#                  mps-priority    the critical process on a high-priority stream, both whole GPU
#                  pieces          greenctx run --split 16,rest: critical piece 0, background 1
#                  trap            critical on piece 0, the background unconfined
#                  two-pieces      16,16,rest: two critical processes on pieces 0 and 1, the
#                                  background on piece 2
#                  two-percentage  two critical processes on the whole GPU, the background at 76%
#                  uneven-pieces   as two-pieces, the second critical process's kernels larger
#                                  than its piece (1024 blocks: four waves on 16 SMs)
#                  uneven-percentage  as two-percentage with that larger second critical kernel:
#                                  nothing keeps it off the SMs the first one needs
#
# PROCESSES_ROUNDS rounds (default 5); in each the placements of each group in an order rotated
# from round to round, the MPS daemon started after the no-MPS group and stopped at the end of the
# round (greenctx mps, pipes and logs under OUT; stopped whatever happens). Writes under $OUT
# (default ./processes-bench-out): samples.jsonl (one line per process), processes.json and
# processes.md (scripts/processes-summary.py: medians over rounds, the targets), meta.json,
# logs/. Exit 0 when everything ran (the targets are results), 1 when a run failed, 2 when the
# build is incomplete, 77 without a GPU or without MPS.
#
#   GREENCTX_BUILD=build-gpu scripts/processes-bench.sh
set -uo pipefail
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
out="${OUT:-$PWD/processes-bench-out}"
bin="${GREENCTX_BUILD:-build}"
rounds=${PROCESSES_ROUNDS:-5}
samples_n=${PROCESSES_SAMPLES:-2000}
cli="$bin/tools/greenctx/greenctx"
prog="$bin/benchmarks/greenctx_process_pair"
for f in "$cli" "$prog"; do
  [ -x "$f" ] || { echo "processes-bench: missing $f (build greenctx_cli greenctx_process_pair)" >&2; exit 2; }
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "processes-bench: PROCESSES_ROUNDS must be a whole number >= 1" >&2; exit 2; }
[[ $samples_n =~ ^[1-9][0-9]*$ ]] || { echo "processes-bench: PROCESSES_SAMPLES must be a whole number >= 1" >&2; exit 2; }
samples="$out/samples.jsonl"
. scripts/lib/processes-common.sh
processes_clean_environment
"$cli" info > /dev/null 2>&1 || { echo "processes-bench: no GPU here (greenctx info failed)" >&2; exit 77; }

mkdir -p "$out/logs"
log="$out/logs/stderr.log"
: > "$samples"
: > "$log"
processes_mps_folders

crit=("$prog" critical --samples "$samples_n")
uneven=(--blocks 1024) # the second critical process's kernel in the uneven placements

# run_placement ROUND NAME BG_PREFIX CRIT1_PREFIX [CRIT2_PREFIX [CRIT2_ARGS...]]: prefixes are
# words before the program ("-" for none; "skip" for no such process); env assignments go first
# (env VAR=...); CRIT2_ARGS are added to the second critical process's arguments.
run_placement() {
  local round=$1 name=$2 bgp=$3 c1p=$4 c2p=${5:-skip}
  local -a c2args=("${@:6}")
  local dir="$out/runs/$round-$name"
  mkdir -p "$dir"
  echo "=== round $round $name: bg[$bgp] critical[$c1p] critical2[$c2p]" >> "$log"
  local bg_pid=""
  if [ "$bgp" != skip ]; then
    local -a pre=()
    [ "$bgp" = - ] || read -r -a pre <<< "$bgp"
    rm -f "$dir/ready"
    local secs=60
    [ "$c1p" = skip ] && secs=2
    "${pre[@]}" "$prog" background --ready "$dir/ready" --seconds "$secs" > "$dir/bg.json" 2>> "$log" &
    bg_pid=$!
    for _ in $(seq 600); do [ -e "$dir/ready" ] || ! kill -0 $bg_pid 2> /dev/null && break; sleep 0.05; done
    [ -e "$dir/ready" ] || echo "(background not ready)" >> "$log"
  fi
  local -a pids=() names=()
  for which in 1 2; do
    local p=$c1p extra=()
    [ $which = 2 ] && p=$c2p extra=("${c2args[@]}")
    [ "$p" = skip ] && continue
    local -a pre=()
    [ "$p" = - ] || read -r -a pre <<< "$p"
    timeout -k 5 120 "${pre[@]}" "${crit[@]}" "${extra[@]}" > "$dir/critical$which.json" 2>> "$log" &
    pids+=($!) names+=("critical$which")
  done
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    record "$round" "$name" "${names[$i]}" $? "$dir/${names[$i]}.json"
  done
  if [ -n "$bg_pid" ]; then
    [ "$c1p" = skip ] || kill -TERM "$bg_pid" 2> /dev/null
    wait "$bg_pid"
    record "$round" "$name" background $? "$dir/bg.json"
  fi
}

nompsp=(alone bg-alone timeslice)
mpsp=(mps-alone piece-alone bg-piece-alone mps-share mps-percentage mps-priority pieces trap
      two-pieces two-percentage uneven-pieces uneven-percentage)
placement() { # placement ROUND NAME
  case $2 in
    alone | mps-alone) run_placement "$1" "$2" skip - ;;
    bg-alone) run_placement "$1" "$2" - skip ;;
    timeslice | mps-share) run_placement "$1" "$2" - - ;;
    piece-alone) run_placement "$1" "$2" skip "$(piece 16,rest 0)" ;;
    bg-piece-alone) run_placement "$1" "$2" "$(piece 16,rest 1)" skip ;;
    mps-percentage) run_placement "$1" "$2" "env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=88" - ;;
    mps-priority) run_placement "$1" "$2" - - ;; # with --priority high (the loop below)
    pieces) run_placement "$1" "$2" "$(piece 16,rest 1)" "$(piece 16,rest 0)" ;;
    trap) run_placement "$1" "$2" - "$(piece 16,rest 0)" ;;
    two-pieces) run_placement "$1" "$2" "$(piece 16,16,rest 2)" "$(piece 16,16,rest 0)" \
                  "$(piece 16,16,rest 1)" ;;
    two-percentage) run_placement "$1" "$2" "env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=76" - - ;;
    uneven-pieces) run_placement "$1" "$2" "$(piece 16,16,rest 2)" "$(piece 16,16,rest 0)" \
                     "$(piece 16,16,rest 1)" "${uneven[@]}" ;;
    uneven-percentage) run_placement "$1" "$2" "env CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=76" - - \
                         "${uneven[@]}" ;;
  esac
}
crit_default=("${crit[@]}")

started=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
  for ((k = 0; k < ${#nompsp[@]}; k++)); do
    placement "$r" "${nompsp[$(((k + r - 1) % ${#nompsp[@]}))]}"
  done
  if ! "$cli" mps start >> "$log" 2>&1; then
    echo "processes-bench: MPS could not be started (see $log)" >&2
    exit 77
  fi
  for ((k = 0; k < ${#mpsp[@]}; k++)); do
    name=${mpsp[$(((k + r - 1) % ${#mpsp[@]}))]}
    if [ "$name" = mps-priority ]; then crit=("${crit_default[@]}" --priority high); fi
    placement "$r" "$name"
    crit=("${crit_default[@]}")
  done
  "$cli" mps stop >> "$log" 2>&1
  [ "$r" -eq 1 ] && echo "processes-bench: round 1 took $(($(date +%s) - started)) s"
done
echo "processes-bench: $(($(date +%s) - started)) s"

PB_GPU=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 2>/dev/null) \
PB_DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0 2>/dev/null) \
PB_DATE=$(date -u +%Y-%m-%dT%H:%M:%SZ) \
PB_COMMIT=$(cat "$bin/COMMIT" 2>/dev/null || git describe --always --dirty 2>/dev/null || echo unknown) \
PB_ROUNDS=$rounds PB_SAMPLES=$samples_n python3 - "$out/meta.json" <<'PY'
import json, os, sys
e = os.environ
json.dump({"environment": {"gpu": e["PB_GPU"], "driver": e["PB_DRIVER"], "date": e["PB_DATE"],
                           "commit": e["PB_COMMIT"]},
           "settings": {"rounds": int(e["PB_ROUNDS"]), "critical_samples": int(e["PB_SAMPLES"]),
                        "critical": "16 blocks x 128 threads spinning 20 us, one every 200 us",
                        "uneven_second_critical": "1024 blocks, the rest as the critical",
                        "background": "8 blocks x 256 threads per SM told, 50000 multiply-adds "
                                      "a thread, two kernels in flight"}},
          open(sys.argv[1], "w"), indent=2)
PY
python3 scripts/processes-summary.py "$samples" "$out/meta.json" "$out" || failed+=("the summary")
if [ ${#failed[@]} -eq 0 ]; then
  echo "PROCESSES BENCH RAN: $out/processes.md"
else
  echo "PROCESSES BENCH: RUNS FAILED: ${failed[*]}"
  exit 1
fi
