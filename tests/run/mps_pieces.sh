#!/usr/bin/env bash
# GPU tier (issue 22): processes on the pieces of one split under MPS. Starts an MPS control daemon
# of its own (greenctx mps start, pipe and log folders under OUT), runs two processes at once on
# the pieces of 16,rest with --strict (under MPS nothing is said about time-slicing), each told its
# piece's SM count, and stops the daemon whatever happens (trap). Exit 77, said, where MPS cannot
# start on this machine; 1 when a check fails.
#
#   tests/run/mps_pieces.sh BUILD OUT
set -uo pipefail
bin=$1 out=$2
cli=$bin/tools/greenctx/greenctx wl=$bin/tests/greenctx_run_workload
mkdir -p "$out"
dir=$(mktemp -d "$out/mps.XXXXXX")
export CUDA_MPS_PIPE_DIRECTORY=$dir/pipes CUDA_MPS_LOG_DIRECTORY=$dir/logs
"$cli" mps status > /dev/null 2>&1 && { echo "mps_pieces: a daemon already answers in $dir" >&2; exit 1; }
if ! "$cli" mps start; then
  echo "mps_pieces: SKIPPED: MPS could not be started here (see above)" >&2
  rm -rf "$dir"
  exit 77
fi
trap '"$cli" mps stop; rm -rf "$dir"' EXIT
failed=0
"$cli" info --device 0 | grep -E '^MPS +active' || { echo "mps_pieces: info does not say MPS active" >&2; failed=1; }
"$cli" run --strict --split 16,rest --piece 0 -- "$wl" memory 256 20 > "$out/mps-piece0.txt" 2>&1 &
p0=$!
"$cli" run --strict --split 16,rest --piece 1 -- "$wl" memory 256 20 > "$out/mps-piece1.txt" 2>&1 &
p1=$!
wait $p0 || { echo "mps_pieces: piece 0 failed: $(tail -3 "$out/mps-piece0.txt")" >&2; failed=1; }
wait $p1 || { echo "mps_pieces: piece 1 failed: $(tail -3 "$out/mps-piece1.txt")" >&2; failed=1; }
grep -q 'device has 16 SMs' "$out/mps-piece0.txt" || { echo "mps_pieces: piece 0 was not told 16 SMs" >&2; failed=1; }
grep -q 'device has 116 SMs' "$out/mps-piece1.txt" || { echo "mps_pieces: piece 1 was not told 116 SMs" >&2; failed=1; }
cat "$out/mps-piece0.txt" "$out/mps-piece1.txt"
[ $failed -eq 0 ] && echo "mps_pieces: PASS" || echo "mps_pieces: FAIL"
exit $failed
