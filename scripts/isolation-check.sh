#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Where the last microseconds of isolation go, for the GPU machine: `greenctx bench` with its
# defaults RUNS times (all placements), then one change at a time against the same base (the
# critical kernel alone in its green context, beside the spin background, and with the critical
# stream at the highest priority; --samples each): the background's queue depth, the driver's
# connections (CUDA_DEVICE_MAX_CONNECTIONS), the background's kernel length (full-GPU waves, block
# time), the critical launches' spacing, the background launched from a thread of its own; the
# base again last (drift). scripts/isolation-summary.py
# reads them all. Writes under $OUT (default ./isolation-check-out):
#   info.json                   greenctx info (the driver's features, work queues included)
#   default-RUN.json / .txt     bench with its defaults
#   variant-NAME.json / .txt    bench on the base with one change
#   summary.md                  isolation-summary.py's tables
# GREENCTX_BUILD names the build folder (default build/); RUNS (default 3) and SAMPLES (default
# 3000) change the counts. Exits non-zero when a run failed (a missed target is not a failure).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
out="${OUT:-$PWD/isolation-check-out}"
mkdir -p "$out"
cli="${GREENCTX_BUILD:-build}/tools/greenctx/greenctx"
runs=${RUNS:-3}
samples=${SAMPLES:-3000}
status=0

bench() { # NAME ENV... -- ARGS...
  local name=$1 envs=()
  shift
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$cli" bench --quiet --json "$out/$name.json" "$@" >"$out/$name.txt" 2>&1
  local rc=$?
  echo "$name: exit $rc ($(date -u +%H:%M:%S))"
  [ "$rc" -le 1 ] || status=1 # 1: a target missed, which the summary says
}

"$cli" info --json "$out/info.json" >/dev/null 2>&1 || status=1
for run in $(seq 1 "$runs"); do
  bench "default-$run" -- 
done
placements=(--placements alone_green,green,green_priority)
base=("${placements[@]}" --samples "$samples")
bench variant-base -- "${base[@]}"
for depth in 1 8; do
  bench "variant-depth-$depth" -- "${base[@]}" --queue-depth "$depth"
done
# One connection: every green sample waits behind the background's queued kernels (milliseconds
# each), so a third of the samples show it at a third of the time.
bench variant-connections-1 CUDA_DEVICE_MAX_CONNECTIONS=1 -- "${placements[@]}" \
  --samples "$((samples / 3))"
for connections in 8 32; do
  bench "variant-connections-$connections" CUDA_DEVICE_MAX_CONNECTIONS="$connections" -- \
    "${base[@]}"
done
for waves in 4 16; do
  bench "variant-waves-$waves" -- "${base[@]}" --waves "$waves"
done
for us in 20 2000; do
  bench "variant-block-$us" -- "${base[@]}" --background-us "$us"
done
bench variant-gap-1000 -- "${base[@]}" --gap-us 1000
bench variant-background-thread -- "${base[@]}" --background-thread
bench variant-base-again -- "${base[@]}"

shopt -s nullglob # RUNS=0: the variants alone
python3 scripts/isolation-summary.py "$out"/default-*.json "$out"/variant-*.json \
  >"$out/summary.md" 2>&1 || status=1
cat "$out/summary.md"
exit $status
