#!/usr/bin/env bash
# Builds the fuzz targets (tests/fuzz/: libFuzzer with ASan and UBSan, clang) in build-fuzz/ and
# runs each on its seed corpus for SECONDS seconds (default 30): exit 0 when none found anything,
# 1 when one did (the input is saved in build-fuzz/findings/, the report in build-fuzz/logs/), 2
# when they cannot be built. New inputs the runs find are kept in build-fuzz/corpus/, not in the
# tree; a run's statistics are in its log.
#
#   scripts/fuzz.sh [SECONDS]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
seconds=${1:-30}
[[ $seconds =~ ^[1-9][0-9]*$ ]] || { echo "fuzz: SECONDS must be a whole number >= 1, not '$seconds'" >&2; exit 2; }
cxx=${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}
[ -n "$cxx" ] || { echo "fuzz: no clang++ (the fuzz targets need libFuzzer)" >&2; exit 2; }
out=build-fuzz
# The CUDA headers the project's own build found (a PyPI toolkit where the machine has none).
cuda_bin=$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "${GREENCTX_BUILD_DIR:-build}/CMakeCache.txt" 2> /dev/null)
root_arg=()
mkdir -p "$out"
[ -n "$cuda_bin" ] && root_arg=(-DCUDAToolkit_ROOT="${cuda_bin%/bin}")
cmake -S tests/fuzz -B "$out" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "${root_arg[@]}" > "$out/configure.log" 2>&1 &&
  cmake --build "$out" -j "$(nproc)" > "$out/build.log" 2>&1 ||
  { cat "$out/configure.log" "$out/build.log" 2> /dev/null | tail -30 >&2; echo "fuzz: the targets could not be built" >&2; exit 2; }
mkdir -p "$out/findings" "$out/logs"
failed=()
for t in partition_request group_params decimal layouts; do
  mkdir -p "$out/corpus/$t"
  log="$out/logs/$t.log"
  "$out/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$out/findings/$t-" "$out/corpus/$t" "tests/fuzz/corpus/$t" > "$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  if [ $rc -eq 0 ]; then
    echo "fuzz: $t: nothing found in ${runs:-?} runs ($seconds s)"
  else
    echo "fuzz: $t: FOUND something (exit $rc); see $log and $out/findings/" >&2
    grep -m 3 -E "fuzz finding|ERROR: |runtime error" "$log" >&2
    failed+=("$t")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "fuzz: findings in ${failed[*]}" >&2; exit 1; }
