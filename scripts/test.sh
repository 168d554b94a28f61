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

# The Python module is built with the rest (CMake's GREENCTX_BUILD_PYTHON), against the Python of a
# virtual environment of its own (BUILD/pyenv) with nanobind, pinned: the committed type stub is
# checked against what this nanobind generates. Its tests use the build tree's package
# (BUILD/python/package, laid out as the wheel's); the wheel pip builds is installed and tested by
# scripts/test-long.sh (the release and the build without a toolkit).
[ -x "$build"/pyenv/bin/python ] || python3 -m venv "$build"/pyenv
"$build"/pyenv/bin/python -m pip install -q --disable-pip-version-check pytest nanobind==3.1.0
scripts/setup.sh -DGREENCTX_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(cd "$build"/pyenv/bin && pwd)/python"
stage_done "setup and build"

(cd "$build" && ctest --output-on-failure --timeout 600 "$@") || status=$?
stage_done "ctest"

PYTHONPATH="$PWD/$build/python/package" "$build"/pyenv/bin/python -m pytest -rs python/tests ||
  status=$?
stage_done "Python module and its tests"

if ! "$build"/tools/greenctx/greenctx info >/dev/null 2>/tmp/greenctx-info.$$; then
  echo "GPU tier skipped on this machine: $(cat /tmp/greenctx-info.$$)"
fi
rm -f /tmp/greenctx-info.$$
exit $status
