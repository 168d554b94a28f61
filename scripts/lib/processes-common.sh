# SPDX-License-Identifier: Apache-2.0
# What the benchmarks across processes share (sourced by scripts/processes-bench.sh and
# scripts/torch-processes.sh, which set `cli`, `out` and `samples` first): an environment without
# greenctx's or MPS's variables, an MPS pipe folder of their own whose daemon is stopped on exit,
# the confining prefix of a piece, and one JSON line per process.

# Leaves no variable of greenctx run's protocol or of MPS from the caller's shell.
processes_clean_environment() {
  while read -r name; do unset "$name"; done < <(env | sed -n 's/^\(GREENCTX_RUN_[A-Z_]*\|CUDA_MPS_[A-Z_]*\)=.*/\1/p')
}

# MPS pipes and logs under $out; the daemon greenctx mps start makes there is stopped on exit.
# Exits 1 when a daemon already answers there.
processes_mps_folders() {
  local dir
  dir=$(mktemp -d "$out/mps.XXXXXX")
  export CUDA_MPS_PIPE_DIRECTORY=$dir/pipes CUDA_MPS_LOG_DIRECTORY=$dir/logs
  trap '"$cli" mps stop > /dev/null 2>&1' EXIT
  if "$cli" mps status > /dev/null 2>&1; then
    echo "$(basename "$0"): an MPS daemon already answers in $dir" >&2
    exit 1
  fi
}

# piece SPLIT I: the words that run a program on piece I of SPLIT.
piece() { echo "$cli" run --split "$1" --piece "$2" --; }

failed=()
# record ROUND PLACEMENT PROCESS EXIT FILE: the last line of FILE (the program's JSON) as one line
# of $samples; a run that failed or printed no JSON is kept as null and named in `failed`.
record() {
  local line
  line=$(tail -n 1 "$5" 2> /dev/null)
  [[ $4 -eq 0 && $line == "{"*"}" ]] || line=null
  printf '{"round":%d,"placement":"%s","process":"%s","exit":%d,"result":%s}\n' \
    "$1" "$2" "$3" "$4" "$line" >> "$samples"
  [[ $4 -eq 0 && $line != null ]] || failed+=("round $1 $2 $3 (exit $4)")
}
