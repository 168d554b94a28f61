#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies the binaries the GPU machine needs, stripped, into build-gpu/ (same layout as build/),
# small enough to carry: then run `GREENCTX_BUILD=build-gpu scripts/gpu-check.sh` there.
# GREENCTX_BUILD_DIR names the build to copy (default build/) and GREENCTX_STAGE_DIR the folder to
# make (default build-gpu/): the CUDA 13.5 build of docs/toolkits.md is staged with
#   GREENCTX_BUILD_DIR=build-135 GREENCTX_STAGE_DIR=build-135-gpu scripts/stage-gpu.sh
# Extra arguments are more files to copy, relative to the build folder.
set -euo pipefail
cd "$(dirname "$0")/.."
src=${GREENCTX_BUILD_DIR:-build}
dst=${GREENCTX_STAGE_DIR:-build-gpu}
case $dst in
  build-*) ;;
  *) echo "stage-gpu: GREENCTX_STAGE_DIR must be a build-* folder of the repository root" >&2
     exit 2 ;;
esac
rm -rf "$dst"
for f in tools/greenctx/greenctx tests/greenctx_gpu_tests tests/greenctx_cpu_tests \
         tests/greenctx_lib_tests tests/greenctx_plan_tests \
         tests/greenctx_no_driver_tests tests/greenctx_cuda_compat_tests tests/greenctx_run_target tests/greenctx_run_workload \
         tools/greenctx/libgreenctx_preload.so benchmarks/greenctx_overhead_bench \
         benchmarks/greenctx_repartition_bench benchmarks/greenctx_pool_bench benchmarks/greenctx_launch_pairs benchmarks/greenctx_process_pair \
         examples/greenctx_quickstart examples/greenctx_runtime_api examples/greenctx_readme_example \
         tests/greenctx_run_{semantics,ptds,ptds_api,cublas_threads,churn,stress,two_devices,overhead} \
         tests/greenctx_run_{sm_count,coop_grid_sync,persistent_barrier,clusters,cublaslt_sm_target} \
         "$@"; do
  mkdir -p "$dst/$(dirname "$f")"
  strip -o "$dst/$f" "$src/$f"
done
# Google Benchmark is shared on Debian; the benchmark finds it beside itself ($ORIGIN).
# The library itself, for what is built against it on the GPU machine (the PyTorch extension).
mkdir -p "$dst/src"
strip --strip-debug -o "$dst/src/libgreenctx.a" "$src/src/libgreenctx.a"
cp -L "$(ldd "$src"/benchmarks/greenctx_overhead_bench | awk '/libbenchmark/ {print $3}')" "$dst"/benchmarks/
# The CLI's GPU checks as ctest tests of this folder: `ctest --test-dir build-gpu -L gpu`.
tests/cli_gpu/run-check.sh --ctest-file > "$dst"/CTestTestfile.cmake
# The device copy of the tree has no git history: record what was built.
git describe --always --dirty > "$dst"/COMMIT 2>/dev/null || echo unknown > "$dst"/COMMIT
# Which toolkit built it (the GPU machine's checks run the same either way).
nvcc=$(sed -n 's/^CMAKE_CUDA_COMPILER:[A-Z]*=//p' "$src"/CMakeCache.txt)
if [ -x "$nvcc" ]; then "$nvcc" --version | tail -n 1 > "$dst"/TOOLKIT; fi
du -sh "$dst"
