#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up, builds and runs the tests: the CPU tier, the GPU tier (each GPU test reported as skipped,
# with its reason, where there is no GPU; ctest -V shows it, and the reason is printed once below),
# and the Python module's tests. It never passes silently. The longer tiers CI adds (the sanitizers
# and fuzzers, CUDA 13.5 and CMake 4 consumers, the wheel built without a toolkit) are
# scripts/test-long.sh. Each stage's time is printed as it ends.
#
#   scripts/test.sh [CTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GREENCTX_BUILD_DIR:-build}
status=0
stage_start=$SECONDS
stage_done() { echo "test.sh: $1 took $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }

scripts/setup.sh
stage_done "setup and build"

(cd "$build" && ctest --output-on-failure --timeout 600 "$@") || status=$?
stage_done "ctest"

# The Python module: built with pip into a virtual environment of its own (BUILD/pyenv), then its
# tests (the GPU ones skip, each with its reason, without a GPU). Pinned: the committed type stub is
# checked against what this nanobind generates.
[ -x "$build"/pyenv/bin/python ] || python3 -m venv "$build"/pyenv
"$build"/pyenv/bin/python -m pip install -q --disable-pip-version-check pytest \
  scikit-build-core==1.1.2 nanobind==3.1.0
# The module's own CMake build uses the toolkit the project's build found (a PyPI one where
# setup.sh installed it: FindCUDAToolkit reads CUDAToolkit_ROOT from the environment).
cuda_bin=$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "$build"/CMakeCache.txt)
case $cuda_bin in
  */cuda-pypi-*/bin) export CUDAToolkit_ROOT=${cuda_bin%/bin} CUDACXX=$cuda_bin/nvcc ;;
esac
"$build"/pyenv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation .
"$build"/pyenv/bin/python -m pytest -rs python/tests || status=$?
stage_done "Python module and its tests"

if ! "$build"/tools/greenctx/greenctx info >/dev/null 2>/tmp/greenctx-info.$$; then
  echo "GPU tier skipped on this machine: $(cat /tmp/greenctx-info.$$)"
fi
rm -f /tmp/greenctx-info.$$
exit $status
