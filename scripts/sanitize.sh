#!/usr/bin/env bash
# The sanitizer tier (tests/sanitize/, clang): builds the plan layer with ASan and UBSan in
# build-sanitize/, runs its CPU tests there, then each fuzz target (libFuzzer) on its seed corpus
# for SECONDS seconds (default 30). Exit 0 when the tests pass and no target found anything, 1
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
cmake -S tests/sanitize -B "$out" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${root_arg[@]}" > "$out/configure.log" 2>&1 &&
  cmake --build "$out" -j "$(nproc)" > "$out/build.log" 2>&1 ||
  { cat "$out/configure.log" "$out/build.log" 2> /dev/null | tail -30 >&2; echo "sanitize: the tier could not be built" >&2; exit 2; }
mkdir -p "$out/findings" "$out/logs"
failed=()
if "$out/sanitized_plan_tests" --gtest_brief=1 > "$out/logs/plan_tests.log" 2>&1; then
  passed=$(sed -n 's/.*\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$out/logs/plan_tests.log")
  echo "sanitize: the plan layer's tests pass under ASan and UBSan (${passed:-?} tests)"
else
  echo "sanitize: the plan layer's tests FAILED under ASan and UBSan; see $out/logs/plan_tests.log" >&2
  tail -20 "$out/logs/plan_tests.log" >&2
  failed+=(plan_tests)
fi
for t in partition_request group_params decimal layouts run_settings; do
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
