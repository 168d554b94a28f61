#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The sanitizer tier (tests/sanitize/, clang): builds the plan layer with ASan and UBSan in
# build-sanitize/, runs its CPU tests there, the library's and compat layer's tests over no driver and
# the compat layer's over the tests' fake driver, then the preload library's tests over the fake driver
# built with ASan and UBSan and again with ThreadSanitizer, then each fuzz target (libFuzzer) on
# its seed corpus for SECONDS seconds (default 30). Exit 0 when the tests pass and no target found anything, 1
# otherwise (a finding's input is saved in build-sanitize/findings/, the report in
# build-sanitize/logs/), 2 when they cannot be built. New inputs the runs find are kept in
# build-sanitize/corpus/, not in the tree; each run's statistics are in its log.
#
#   scripts/sanitize.sh [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
seconds=${1:-30}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "sanitize: SECONDS must be a whole number >= 1, not '$seconds'" >&2; exit 2; }
cxx=${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}
[ -n "$cxx" ] || { echo "sanitize: no clang++ (the fuzz targets need libFuzzer)" >&2; exit 2; }
out=build-sanitize
# The CUDA headers the project's own build found (a PyPI toolkit where the machine has none).
cuda_bin=$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "${GREENCTX_BUILD_DIR:-build}/CMakeCache.txt" 2> /dev/null)
root_arg=()
mkdir -p "$out"
[ -n "$cuda_bin" ] && root_arg=(-DCUDAToolkit_ROOT="${cuda_bin%/bin}")
# The kernels the library embeds, as the project's own build made them (nvcc is not run here).
kernels=$(realpath -m "${GREENCTX_BUILD_DIR:-build}/src/greenctx_kernels_fatbin.cpp")
[ -f "$kernels" ] || { echo "sanitize: no $kernels: build the project first (scripts/setup.sh)" >&2; exit 2; }
root_arg+=(-DGREENCTX_KERNELS_SOURCE="$kernels")
cc=${FUZZ_CC:-$(command -v "${cxx/clang++/clang}" || command -v clang)}
cmake -S tests/sanitize -B "$out" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${root_arg[@]}" > "$out/configure.log" 2>&1 &&
  cmake --build "$out" -j "$(nproc)" > "$out/build.log" 2>&1 ||
  { cat "$out/configure.log" "$out/build.log" 2> /dev/null | tail -30 >&2; echo "sanitize: the tier could not be built" >&2; exit 2; }
mkdir -p "$out/findings" "$out/logs"
failed=()
# run_tests NAME WHAT PROGRAM [NAME=value...]: a sanitized gtest program, its log in logs/NAME.log.
run_tests() {
  local name=$1 what=$2 program=$3 log="$out/logs/$1.log"
  shift 3
  if env "$@" "$program" --gtest_brief=1 > "$log" 2>&1; then
    passed=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log")
    echo "sanitize: $what pass under ASan and UBSan (${passed:-?} tests)"
  else
    echo "sanitize: $what FAILED under ASan and UBSan; see $log" >&2
    tail -20 "$log" >&2
    failed+=("$name")
  fi
}
run_tests plan_tests "the plan layer's tests" "$out/sanitized_plan_tests"
run_tests no_driver_tests "the library and the compat layer over no driver" \
  "$out/sanitized_no_driver_tests" GREENCTX_LIBCUDA=/nonexistent/libcuda.so.1
run_tests fake_driver_tests "the compat layer over the fake driver" \
  "$out/sanitized_fake_driver_tests" GREENCTX_LIBCUDA="$out/asan/fake_cuda/libcuda.so.1"
# The preload library's tests, as ctest runs them (tests/CMakeLists.txt): the main run, then the
# settings that need a process of their own. Any sanitizer report ends the run with an error.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=0:halt_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
preload_cases=(
  "all||"
  "strict|PreloadStrict.*|GREENCTX_RUN_STRICT=1"
  "measure_only|PreloadMeasureOnly.*|GREENCTX_RUN_MEASURE=1"
  "real_sm_count|PreloadRealSmCount.*|GREENCTX_RUN_REAL_SM_COUNT=1"
  "piece|PreloadPiece.*|GREENCTX_RUN_SPLIT=8,24,rest GREENCTX_RUN_PIECE=1 GREENCTX_TEST_PIECE_SMS=24"
  "cuda_13_1|PreloadCuda131.*|GREENCTX_RUN_CUDA_13_1=1 GREENCTX_TEST_UNCONFINED=1"
  "cuda_13_1_confined|PreloadCuda131.*|GREENCTX_RUN_CUDA_13_1=1"
)
for kind in asan tsan; do
  label=$([ $kind = asan ] && echo "ASan and UBSan" || echo "ThreadSanitizer")
  bad=()
  total=0
  for c in "${preload_cases[@]}"; do
    IFS='|' read -r name filter env_vars <<< "$c"
    log="$out/logs/preload_${kind}_$name.log"
    # shellcheck disable=SC2086 # env_vars is a list of NAME=value words
    if env $env_vars "$out/${kind}_preload_tests" --gtest_brief=1 ${filter:+--gtest_filter=$filter} > "$log" 2>&1 &&
      ! grep -qE "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error|WARNING: ThreadSanitizer" "$log"; then
      n=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log")
      total=$((total + ${n:-0}))
    else
      bad+=("$name")
    fi
  done
  if [ ${#bad[@]} -eq 0 ]; then
    echo "sanitize: the preload library's tests over the fake driver pass under $label ($total tests, ${#preload_cases[@]} runs)"
  else
    echo "sanitize: the preload library's tests FAILED under $label: ${bad[*]}; see $out/logs/preload_${kind}_*.log" >&2
    for name in "${bad[@]}"; do
      grep -m 5 -E "ERROR: |runtime error|WARNING: ThreadSanitizer|Failure|FAILED" "$out/logs/preload_${kind}_$name.log" >&2
    done
    failed+=("preload_$kind")
  fi
done
for t in partition_request group_params decimal layouts run_settings sm_lists report_readers compat compat_fake device_lists; do
  mkdir -p "$out/corpus/$t"
  log="$out/logs/$t.log"
  "$out/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/findings/$t-" "$out/corpus/$t" "tests/sanitize/corpus/$t" > "$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if [ $rc -eq 0 ]; then
    echo "sanitize: fuzz $t: nothing found in ${runs:-?} runs ($seconds s)"
  else
    echo "sanitize: fuzz $t: FOUND something (exit $rc); see $log and $out/findings/" >&2
    grep -m 3 -E "fuzz finding|ERROR: |runtime error" "$log" >&2
    failed+=("$t")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "sanitize: failed: ${failed[*]}" >&2; exit 1; }
