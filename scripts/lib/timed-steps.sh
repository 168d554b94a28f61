# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU machine's checks (gpu-check-python.sh, release-gpu-check.sh). The caller sets
# `log` (the log file) and `failed=()`.
#   step NAME LIMIT COMMAND...   runs it with a time limit (GPU_CHECK_STEP_TIMEOUT overrides them
#                                all; a hang counts as a failure), logs it, remembers a failure
#   finish_checks TITLE          says TITLE PASSED or FAILED with the failed steps, and exits so
#   nvcc_on_path                 puts the toolkit's nvcc on PATH when it is not there
step() {
  local name=$1 limit=${GPU_CHECK_STEP_TIMEOUT:-$2}; shift 2
  { echo; echo "=== $name (limit ${limit}s): $*"; } | tee -a "$log"
  timeout "$limit" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 124 ] && echo "=== $name: timed out after ${limit}s" | tee -a "$log"
  echo "=== $name: exit $rc" | tee -a "$log"
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
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
