#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# compute-sanitizer over the GPU tier's test programs, for the GPU machine:
# memcheck, racecheck and synccheck on the GPU tests and the compat layer's tests. Writes each tool's log
# and summary.txt under $OUT (or ./compute-sanitizer-out). Exits 0 when every run reports
# "ERROR SUMMARY: 0 errors" and its tests pass, 1 otherwise, 77 when compute-sanitizer is absent
# or refuses to run on this machine (it works on some hosts only; the log says why).
#   GREENCTX_BUILD (default build), SANITIZER_TOOLS (default "memcheck racecheck synccheck"),
#   SANITIZER_FILTER (a gtest filter for the GPU tests), SANITIZER_TIMEOUT (s per run, 240)
# CUDA API calls that return an error are not reported (--report-api-errors no): greenctx asks the
# driver for entry points it may lack (cuGetProcAddress answers CUDA_ERROR_INVALID_VALUE for the
# 13.1 ones on driver 580) and tests refusals on purpose (a split by count that cannot be made).
# The default filter leaves out PoolTest.drain_orders_the_new_layouts_work_after_the_old_ones: its
# control needs a kernel still running when the host looks, and under instrumentation the host is
# slower than that kernel (measured: "the control is void" under memcheck and synccheck).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/compute-sanitizer-out}"
bin="${GREENCTX_BUILD:-build}"
mkdir -p "$out"
cs=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
summary="$out/summary.txt"
: > "$summary"
if [ -z "$cs" ]; then
  echo "compute-sanitizer-check: no compute-sanitizer on this machine" | tee -a "$summary"
  exit 77
fi
"$cs" --version | tee -a "$summary"
programs=("$bin/tests/greenctx_gpu_tests" "$bin/tests/greenctx_cuda_compat_tests")
failed=0
refused=0
for tool in ${SANITIZER_TOOLS:-memcheck racecheck synccheck}; do
  for p in "${programs[@]}"; do
    name="$(basename "$p")-$tool"
    log="$out/$name.log"
    filter=()
    [[ $p == *gpu_tests ]] &&
      filter=(--gtest_filter="${SANITIZER_FILTER:--PoolTest.drain_orders_the_new_layouts_work_after_the_old_ones}")
    timeout "${SANITIZER_TIMEOUT:-240}" "$cs" --tool "$tool" --report-api-errors no --error-exitcode 99 \
      "$p" --gtest_brief=1 "${filter[@]}" > "$log" 2>&1
    rc=$?
    # memcheck and synccheck end with "ERROR SUMMARY: N errors", racecheck with "(N errors, ...".
    errors=$(grep -oE 'ERROR SUMMARY: [0-9]+ error|\([0-9]+ errors?,' "$log" | tail -1 |
             sed -E 's/^\(([0-9]+) errors?,/ERROR SUMMARY: \1 error/')
    passed=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1)
    line="$name: exit $rc, ${errors:-no error summary}, ${passed:-?} tests passed"
    if grep -qE "Target application terminated before first instrumented API call|not supported|Unable to|Error: Device not supported" "$log" && [ -z "$errors" ]; then
      line="$line (compute-sanitizer refused to run here: $(grep -m1 -E 'not supported|Unable to|terminated' "$log"))"
      refused=1
    elif [ $rc -ne 0 ] || [ "$errors" != "ERROR SUMMARY: 0 error" ]; then
      failed=1
    fi
    echo "$line" | tee -a "$summary"
  done
done
[ $failed -eq 0 ] || exit 1
[ $refused -eq 0 ] || exit 77
