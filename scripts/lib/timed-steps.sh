# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU machine's checks (gpu-check-python.sh, gpu-check-multi.sh,
# binary-compat-check.sh, release-gpu-check.sh).
#   check_output DEFAULT LOG     out=$OUT (default ./DEFAULT) made and absolute, log=$out/LOG
#                                emptied, failed=()
#   step NAME LIMIT COMMAND...   runs it with a time limit (GPU_CHECK_STEP_TIMEOUT overrides them
#                                all; a hang counts as a failure, and is killed 10 s after its
#                                SIGTERM), logs it, remembers a failure; an exit code listed in
#                                $step_also_ok (e.g. 77, skipped) counts as passed
#   finish_checks TITLE          says TITLE PASSED or FAILED with the failed steps, and exits so
#   nvcc_on_path                 puts the toolkit's nvcc on PATH when it is not there
check_output() {
  out="${OUT:-$PWD/$1}"
  mkdir -p "$out" && out="$(cd "$out" && pwd)" || exit 2
  log="$out/$2"
  : >"$log"
  failed=()
}
step() {
  local name=$1 limit=${GPU_CHECK_STEP_TIMEOUT:-$2}; shift 2
  { echo; echo "=== $name (limit ${limit}s): $*"; } | tee -a "$log"
  timeout -k 10 "$limit" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 124 ] && echo "=== $name: timed out after ${limit}s" | tee -a "$log"
  echo "=== $name: exit $rc" | tee -a "$log"
  [ "$rc" -eq 0 ] || [[ " ${step_also_ok:-} " == *" $rc "* ]] || failed+=("$name (exit $rc)")
  return "$rc"
}
finish_checks() {
  echo | tee -a "$log"
  if [ ${#failed[@]} -eq 0 ]; then
    echo "$1 PASSED" | tee -a "$log"
    exit 0
  fi
  echo "$1 FAILED: ${failed[*]}" | tee -a "$log"
  exit 1
}
nvcc_on_path() {
  command -v nvcc >/dev/null 2>&1 && return
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && return
  done
}
