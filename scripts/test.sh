#!/usr/bin/env bash
# Sets up, builds and runs every test. Without a GPU the GPU tier is reported as skipped, each test
# with its reason (ctest -V shows it; the reason is also printed once below); it never passes
# silently.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GREENCTX_BUILD_DIR:-build}
status=0
scripts/setup.sh

# The Python module: built with pip into a virtual environment of its own (BUILD/pyenv), then its
# tests (the GPU ones skip, each with its reason, without a GPU).
if [ ! -x "$build"/pyenv/bin/python ]; then
  python3 -m venv "$build"/pyenv
fi

# cuda_compat.h with CUDA 13.1+ headers (ctest cpu.toolkit.routing): checked against CUDA 13.5's
# nvcc and headers from PyPI, installed into BUILD/cuda-pypi-13.5.37 with the virtual environment's
# pip. No network is a failure, said here and again at the end, never a silent pass.
routing_error=""
routing_cuda=$build/cuda-pypi-13.5.37
if GREENCTX_PYTHON="$build"/pyenv/bin/python scripts/cuda-toolkit-pypi.sh "$routing_cuda" \
     --version 13.5.37; then
  cmake "$build" -DGREENCTX_ROUTING_CHECK_CUDA="$(cd "$routing_cuda" && pwd)" >/dev/null
else
  routing_error="FAILED: the CUDA 13.5 toolkit could not be installed from PyPI"
  routing_error+=" (scripts/cuda-toolkit-pypi.sh, above), so cpu.toolkit.routing did not run"
  echo "$routing_error" >&2
  status=1
fi

# A second CMake for the packaging consumer (install_find_package.cmake2*): PyPI's, the newest
# major version, beside Debian's that builds greenctx.
consumer_cmake_version=4.4.5
if "$build"/pyenv/bin/python -m pip install -q --disable-pip-version-check \
     "cmake==$consumer_cmake_version"; then
  cmake "$build" -DGREENCTX_CONSUMER_CMAKE="$(cd "$build"/pyenv/bin && pwd)/cmake" >/dev/null
else
  routing_error+="${routing_error:+; }FAILED: cmake $consumer_cmake_version could not be installed"
  routing_error+=" from PyPI, so install_find_package.cmake2* did not run"
  echo "FAILED: cmake $consumer_cmake_version from PyPI" >&2
  status=1
fi

(cd "$build" && ctest --output-on-failure --timeout 600 "$@") || status=$?

# The sanitizer tier (tests/sanitize/): the plan layer's tests under ASan and UBSan, and its text
# parsers fuzzed, each for a bounded time.
GREENCTX_BUILD_DIR=$build scripts/sanitize.sh "${GREENCTX_FUZZ_SECONDS:-30}" || status=1

# Pinned: the committed type stub is checked against what this nanobind generates.
"$build"/pyenv/bin/python -m pip install -q --disable-pip-version-check pytest \
  scikit-build-core==1.1.2 nanobind==3.1.0
# The module's own CMake build uses the toolkit the project's build found when setup.sh installed
# it from PyPI (FindCUDAToolkit reads CUDAToolkit_ROOT from the environment).
cuda_bin=$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "$build"/CMakeCache.txt)
case $cuda_bin in
  */cuda-pypi-*/bin) export CUDAToolkit_ROOT=${cuda_bin%/bin} CUDACXX=$cuda_bin/nvcc ;;
esac
"$build"/pyenv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation .
"$build"/pyenv/bin/python -m pytest -rs python/tests || status=$?

# pip wheel . where the build must take the CUDA toolkit from PyPI, installed away from the source.
GREENCTX_BUILD_DIR=$build GREENCTX_PYTHON="$build"/pyenv/bin/python scripts/wheel-no-toolkit.sh ||
  status=1

if ! "$build"/tools/greenctx/greenctx info >/dev/null 2>/tmp/greenctx-info.$$; then
  echo "GPU tier skipped on this machine: $(cat /tmp/greenctx-info.$$)"
fi
rm -f /tmp/greenctx-info.$$
[ -z "$routing_error" ] || echo "$routing_error" >&2
exit $status
