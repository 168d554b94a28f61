#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Real programs across processes: a PyTorch small-batch inference loop beside a
# PyTorch GEMM loop (benchmarks/torch_processes.py), under an MPS daemon of its own: sharing all SMs,
# and on the pieces of 16,rest (inference on the 16). Each program's output is compared with its
# plain run alone (no MPS, unconfined), and the inference loop's p99 with sharing.
#
# TORCH_PROCESSES_ROUNDS rounds (default 2), placements in a fixed order per round:
#   infer-plain, train-plain   each alone, no MPS (the reference outputs)
#   infer-mps                  the inference alone, MPS
#   infer-piece                the inference alone on piece 0 of 16,rest, MPS
#   share                      both on the whole GPU, MPS
#   pieces                     inference on piece 0, GEMM loop on piece 1, MPS
# Writes under $OUT (default ./torch-processes-out): samples.jsonl, torch-processes.json and .md.
# Exit 0 when everything ran and every output matched (relative 1e-4), 1 otherwise, 77 without
# torch, a GPU or MPS.
#
#   GREENCTX_BUILD=build-gpu scripts/torch-processes.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
out="${OUT:-$PWD/torch-processes-out}"
bin="${GREENCTX_BUILD:-build}"
rounds=${TORCH_PROCESSES_ROUNDS:-2}
cli="$bin/tools/greenctx/greenctx"
py=(python3 benchmarks/torch_processes.py)
[ -x "$cli" ] || { echo "torch-processes: missing $cli" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "torch-processes: TORCH_PROCESSES_ROUNDS must be >= 1" >&2; exit 2; }
python3 -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2> /dev/null ||
  { echo "torch-processes: SKIPPED: no torch with a GPU here" >&2; exit 77; }
mkdir -p "$out/runs"
samples="$out/samples.jsonl"
log="$out/stderr.log"
: > "$samples"
: > "$log"
. scripts/lib/processes-common.sh
processes_clean_environment
processes_mps_folders

# one ROUND PLACEMENT ROLE PREFIX: one program alone ("-": no prefix)
one() {
  local -a pre=()
  [ "$4" = - ] || read -r -a pre <<< "$4"
  echo "=== round $1 $2 $3" >> "$log"
  timeout -k 5 120 "${pre[@]}" "${py[@]}" "$3" > "$out/runs/$1-$2-$3.json" 2>> "$log"
  record "$1" "$2" "$3" $? "$out/runs/$1-$2-$3.json"
}

# pair ROUND PLACEMENT TRAIN_PREFIX INFER_PREFIX: the GEMM loop first, the inference once it is
# past its warm-up
pair() {
  local -a tp=() ip=()
  [ "$3" = - ] || read -r -a tp <<< "$3"
  [ "$4" = - ] || read -r -a ip <<< "$4"
  local ready="$out/runs/$1-$2.ready"
  rm -f "$ready"
  echo "=== round $1 $2" >> "$log"
  timeout -k 5 120 "${tp[@]}" "${py[@]}" train --ready "$ready" > "$out/runs/$1-$2-train.json" 2>> "$log" &
  local tpid=$!
  for _ in $(seq 1200); do [ -e "$ready" ] || ! kill -0 $tpid 2> /dev/null && break; sleep 0.05; done
  timeout -k 5 120 "${ip[@]}" "${py[@]}" infer > "$out/runs/$1-$2-infer.json" 2>> "$log"
  record "$1" "$2" infer $? "$out/runs/$1-$2-infer.json"
  wait $tpid
  record "$1" "$2" train $? "$out/runs/$1-$2-train.json"
}

started=$(date +%s)
for ((r = 1; r <= rounds; r++)); do
  one "$r" infer-plain infer -
  one "$r" train-plain train -
  if ! "$cli" mps start >> "$log" 2>&1; then
    echo "torch-processes: SKIPPED: MPS could not be started (see $log)" >&2
    exit 77
  fi
  one "$r" infer-mps infer -
  one "$r" infer-piece infer "$(piece 16,rest 0)"
  pair "$r" share - -
  pair "$r" pieces "$(piece 16,rest 1)" "$(piece 16,rest 0)"
  "$cli" mps stop >> "$log" 2>&1
done
echo "torch-processes: $(($(date +%s) - started)) s"

python3 - "$samples" "$out" <<'PY' || failed+=("outputs differ from the plain runs, or the summary failed")
import json, statistics, sys
from pathlib import Path
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = [r for r in rows if r["exit"] == 0 and isinstance(r["result"], dict)]
def values(place, role, key):
    return [r["result"][key] for r in ok if (r["placement"], r["process"]) == (place, role)
            and key in r["result"]]
def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)
ref = {role: next((r["result"]["output"] for r in ok if r["placement"] == f"{role}-plain"), None)
       for role in ("infer", "train")}
worst = {}
for r in ok:
    o, want = r["result"]["output"], ref[r["process"]]
    if want is None:
        continue
    d = max([rel(o["sum"], want["sum"]), rel(o["abs_sum"], want["abs_sum"])]
            + [rel(x, y) for x, y in zip(o["first"], want["first"])])
    key = f"{r['placement']} {r['process']}"
    worst[key] = max(worst.get(key, 0.0), d)
places = ["infer-plain", "infer-mps", "infer-piece", "share", "pieces"]
md = ["# PyTorch inference beside a PyTorch GEMM loop, across processes", "",
      "| placement | inference p50 (us) | inference p99 (us) | its SMs | GEMM loop TFLOP/s | its SMs | "
      "largest relative difference from the plain run (inference, GEMM loop) |",
      "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
def m(v):
    return f"{statistics.median(v):.1f}" if v else "–"
for p in places + ["train-plain"]:
    md.append(f"| {p} | {m(values(p, 'infer', 'p50_us'))} | {m(values(p, 'infer', 'p99_us'))} | "
              f"{m(values(p, 'infer', 'sms'))} | {m(values(p, 'train', 'tflops'))} | "
              f"{m(values(p, 'train', 'sms'))} | {worst.get(p + ' infer', '–')}, "
              f"{worst.get(p + ' train', '–')} |")
bad = {k: v for k, v in worst.items() if v > 1e-4}
md += ["", "Outputs: " + ("every run within 1e-4 of its plain run" if not bad
                          else "DIFFER: " + ", ".join(f"{k} {v:.2e}" for k, v in bad.items()))]
Path(sys.argv[2], "torch-processes.md").write_text("\n".join(md) + "\n")
Path(sys.argv[2], "torch-processes.json").write_text(json.dumps(
    {"worst_relative_difference": worst, "rows": rows}, indent=2) + "\n")
print("\n".join(md))
sys.exit(1 if bad else 0)
PY
if [ ${#failed[@]} -eq 0 ]; then
  echo "TORCH PROCESSES RAN: $out/torch-processes.md"
else
  echo "TORCH PROCESSES: FAILED: ${failed[*]}"
  exit 1
fi
