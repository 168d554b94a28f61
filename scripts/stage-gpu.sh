#!/usr/bin/env bash
# Copies the binaries the GPU machine needs, stripped, into build-gpu/ (same layout as build/),
# small enough to carry: then run `GREENCTX_BUILD=build-gpu scripts/gpu-check.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build-gpu
for f in tools/greenctx/greenctx tests/greenctx_gpu_tests tests/greenctx_cpu_tests \
         tests/greenctx_lib_tests tests/greenctx_plan_tests \
         tests/greenctx_no_driver_tests tests/greenctx_cuda_compat_tests tests/greenctx_run_target tests/greenctx_run_workload \
         tools/greenctx/libgreenctx_preload.so bench/greenctx_overhead_bench \
         examples/greenctx_quickstart examples/greenctx_runtime_api \
         tests/greenctx_run_{semantics,ptds,cublas_threads,churn,stress,two_devices,overhead} "$@"; do
  mkdir -p "build-gpu/$(dirname "$f")"
  strip -o "build-gpu/$f" "build/$f"
done
# Google Benchmark is shared on Debian; the benchmark finds it beside itself ($ORIGIN).
cp -L "$(ldd build/bench/greenctx_overhead_bench | awk '/libbenchmark/ {print $3}')" build-gpu/bench/
# The CLI's GPU checks as ctest tests of this folder: `ctest --test-dir build-gpu -L gpu`.
tests/cli_gpu/run-check.sh --ctest-file > build-gpu/CTestTestfile.cmake
# The device copy of the tree has no git history: record what was built.
git describe --always --dirty > build-gpu/COMMIT 2>/dev/null || echo unknown > build-gpu/COMMIT
du -sh build-gpu
