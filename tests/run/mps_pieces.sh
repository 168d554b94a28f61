#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# GPU tier: processes on the pieces of one split under MPS. First, without MPS,
# greenctx verify --processes must fail (the processes take turns), and two processes' piece
# resources are compared byte for byte. Then it starts an MPS control daemon of its own (greenctx
# mps start, pipe and log folders under OUT), verifies 16,rest and 16,32,rest across processes,
# runs two processes at once on the pieces of 16,rest with --strict (under MPS nothing is said
# about time-slicing), each told its piece's SM count, and stops the daemon whatever happens
# (trap). Exit 77, said, where MPS cannot start on this machine; 1 when a check fails.
#
#   tests/run/mps_pieces.sh BUILD OUT
set -uo pipefail
bin=$1 out=$2
cli=$bin/tools/greenctx/greenctx wl=$bin/tests/greenctx_run_workload
mkdir -p "$out"
dir=$(mktemp -d "$out/mps.XXXXXX")
export CUDA_MPS_PIPE_DIRECTORY=$dir/pipes CUDA_MPS_LOG_DIRECTORY=$dir/logs
"$cli" mps status > /dev/null 2>&1 && { echo "mps_pieces: a daemon already answers in $dir" >&2; exit 1; }
failed=0
# Without MPS the pieces' processes take turns: greenctx verify --processes must say so and fail.
"$cli" verify 16,rest --processes --spin-ms 50 > "$out/verify-processes-no-mps.txt" 2>&1
rc=$?
cat "$out/verify-processes-no-mps.txt"
if [ $rc -ne 1 ] || ! grep -q '^MPS: not active' "$out/verify-processes-no-mps.txt" ||
   ! grep -q '^VIOLATION: .*did not run side by side\|^VIOLATION: .*as long as alone' "$out/verify-processes-no-mps.txt"; then
  echo "mps_pieces: verify --processes without MPS exited $rc, not 1 with the time-slicing violation" >&2
  failed=1
fi
# The pieces' resources as two processes made them (the preload's debug line), for the check that
# one split gives the same pieces in every process.
for i in 0 1; do
  for n in 1 2; do
    GREENCTX_PRELOAD_DEBUG=1 "$cli" run --split 16,rest --piece $i -- "$wl" memory 16 1 2>&1 |
      sed -n "s/.*piece $i of '16,rest' on device 0: //p" > "$out/piece$i-process$n.txt"
  done
  # Measured on driver 580: bytes 8-15 of each resource are a pointer of the process's and bytes
  # 20-23 differ too; the rest is compared.
  python3 - "$out/piece$i-process1.txt" "$out/piece$i-process2.txt" <<'PY'
import sys
def pieces(path):
    words = open(path).read().split()
    return [w for w in words if len(w) > 40]
a, b = pieces(sys.argv[1]), pieces(sys.argv[2])
mask = lambda h: h[:16] + "." * 32 + h[48:]
same_raw = a == b and bool(a)
same_masked = [mask(x) for x in a] == [mask(x) for x in b] and bool(a)
print(f"mps_pieces: {sys.argv[1]}: {len(a)} resource(s); byte-identical across two processes: "
      f"{same_raw}; identical but for bytes 8-23: {same_masked}")
PY
done
if ! "$cli" mps start; then
  echo "mps_pieces: SKIPPED: MPS could not be started here (see above)" >&2
  rm -rf "$dir"
  exit 77
fi
trap '"$cli" mps stop; rm -rf "$dir"' EXIT
"$cli" info --device 0 | grep -E '^note: GPU 0: MPS active' || { echo "mps_pieces: info does not say MPS active" >&2; failed=1; }
"$cli" run --strict --split 16,rest --piece 0 -- "$wl" memory 256 20 > "$out/mps-piece0.txt" 2>&1 &
p0=$!
"$cli" run --strict --split 16,rest --piece 1 -- "$wl" memory 256 20 > "$out/mps-piece1.txt" 2>&1 &
p1=$!
wait $p0 || { echo "mps_pieces: piece 0 failed: $(tail -3 "$out/mps-piece0.txt")" >&2; failed=1; }
wait $p1 || { echo "mps_pieces: piece 1 failed: $(tail -3 "$out/mps-piece1.txt")" >&2; failed=1; }
# Under MPS: each piece's process told and kept on its piece, side by side (two and three pieces).
for split in 16,rest 16,32,rest; do
  "$cli" verify "$split" --processes > "$out/verify-processes-$split.txt" 2>&1
  rc=$?
  cat "$out/verify-processes-$split.txt"
  if [ $rc -ne 0 ] || ! grep -q '^OK: ' "$out/verify-processes-$split.txt"; then
    echo "mps_pieces: verify $split --processes under MPS exited $rc" >&2
    failed=1
  fi
done
# MPS's active-thread percentage below 100 and pieces do not combine: refused, exit 2.
CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 "$cli" run --split 16,rest --piece 0 -- true > "$out/percentage.txt" 2>&1
rc=$?
cat "$out/percentage.txt"
if [ $rc -ne 2 ] || ! grep -q 'CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 is set and device 0 is an MPS client' "$out/percentage.txt"; then
  echo "mps_pieces: run with CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50 under MPS exited $rc, not 2 with the reason" >&2
  failed=1
fi
"$cli" verify 16,rest --processes --json - > "$out/verify-processes.json" 2> "$out/verify-processes-json.err" ||
  { echo "mps_pieces: verify --processes --json failed: $(tail -3 "$out/verify-processes-json.err")" >&2; failed=1; }
grep -q 'device has 16 SMs' "$out/mps-piece0.txt" || { echo "mps_pieces: piece 0 was not told 16 SMs" >&2; failed=1; }
grep -q 'device has 116 SMs' "$out/mps-piece1.txt" || { echo "mps_pieces: piece 1 was not told 116 SMs" >&2; failed=1; }
cat "$out/mps-piece0.txt" "$out/mps-piece1.txt"
[ $failed -eq 0 ] && echo "mps_pieces: PASS" || echo "mps_pieces: FAIL"
exit $failed
