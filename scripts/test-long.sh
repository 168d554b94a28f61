#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The longer tiers, after scripts/test.sh in the same build folder (CI's .ci/run runs both):
# - cuda_compat.h with CUDA 13.1+ headers (ctest cpu.toolkit.routing), checked against CUDA 13.5's
#   nvcc and headers from PyPI, installed into BUILD/cuda-pypi-13.5.37;
# - the installed package used from another CMake (PyPI's CMake 4) and that toolkit
#   (ctest install_find_package.cmake2, .cuda2, .cmake2_cuda2);
# - the embedded kernels' architectures as cuobjdump lists them (ctest cpu.kernels.architectures;
#   PyPI's cuobjdump where the toolkit has none);
# - the sanitizer tier (tests/sanitize/: the plan layer's tests under ASan and UBSan, the preload
#   library's under ASan, UBSan and TSan, its text parsers fuzzed GREENCTX_FUZZ_SECONDS each,
#   default 30);
# - `pip wheel .` where the build must take the CUDA toolkit from PyPI, installed and tested away
#   from the source;
# - the release (scripts/release.sh): the sdist, the wheel built from it and repaired to a
#   manylinux tag, installed into a fresh environment and tested;
# - the type check of the Python package and the examples (mypy, pinned; [tool.mypy] in
#   pyproject.toml).
# Needs network access to PyPI: without it the steps that need it fail, said here and again at the
# end, never a silent pass. Exit 0 when all passed, 1 otherwise.
#
#   scripts/test-long.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${GREENCTX_BUILD_DIR:-build}
python=$build/pyenv/bin/python
[ -x "$python" ] || { echo "test-long: run scripts/test.sh first (no $python)" >&2; exit 1; }
failures=()
stage_start=$SECONDS
stage_done() { echo "test-long.sh: $1 took $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }

routing_cuda=$build/cuda-pypi-13.5.37
consumer_cmake_version=4.4.5
if GREENCTX_PYTHON=$python scripts/cuda-toolkit-pypi.sh "$routing_cuda" --version 13.5.37; then
  cmake "$build" -DGREENCTX_ROUTING_CHECK_CUDA="$(cd "$routing_cuda" && pwd)" >/dev/null
else
  failures+=("the CUDA 13.5 toolkit could not be installed from PyPI, so cpu.toolkit.routing and the cuda2 consumers did not run")
fi
if "$python" -m pip install -q --disable-pip-version-check "cmake==$consumer_cmake_version"; then
  cmake "$build" -DGREENCTX_CONSUMER_CMAKE="$(cd "$build"/pyenv/bin && pwd)/cmake" >/dev/null
else
  failures+=("cmake $consumer_cmake_version could not be installed from PyPI, so the cmake2 consumers did not run")
fi
# cuobjdump, where the toolkit has none, for the listing of the embedded kernels' architectures.
if "$python" -m pip install -q --disable-pip-version-check nvidia-cuda-cuobjdump==13.5.37; then
  cuobjdump=$("$python" -c 'import nvidia, pathlib; print(next(p for d in nvidia.__path__ for p in pathlib.Path(d).glob("cu*/bin/cuobjdump")))')
  chmod +x "$cuobjdump"
  cmake "$build" -DGREENCTX_CUOBJDUMP="$cuobjdump" >/dev/null
else
  failures+=("cuobjdump could not be installed from PyPI, so cpu.kernels.architectures did not run")
fi
tests='^(cpu\.toolkit\.routing|cpu\.toolkit\.cudart_13_1|cpu\.kernels\.architectures|install_find_package\..+)$'
if (cd "$build" && ctest -N -R "$tests" | grep -q 'Total Tests: [1-9]'); then
  (cd "$build" && ctest --output-on-failure --timeout 600 -R "$tests") ||
    failures+=("ctest: the CUDA 13.5, CMake 4 or kernel architecture checks")
fi
stage_done "other toolkit, CMake and cuobjdump"

GREENCTX_BUILD_DIR=$build scripts/sanitize.sh "${GREENCTX_FUZZ_SECONDS:-30}" ||
  failures+=("the sanitizer tier (scripts/sanitize.sh)")
stage_done "sanitizers and fuzzers"

GREENCTX_BUILD_DIR=$build GREENCTX_PYTHON=$python scripts/wheel-no-toolkit.sh ||
  failures+=("the wheel built without a toolkit (scripts/wheel-no-toolkit.sh)")
stage_done "wheel without a toolkit"

# Pinned: a newer mypy may find new things to say, which should come with a change of its own.
# 1.20 still checks code for Python 3.9, the oldest the package supports (mypy 2.4 does not).
mypy_version=1.20.2
if "$python" -m pip install -q --disable-pip-version-check "mypy==$mypy_version"; then
  "$python" -m mypy --cache-dir "$build/mypy-cache" ||
    failures+=("the type check (mypy; pyproject.toml's [tool.mypy] says what it checks)")
else
  failures+=("mypy $mypy_version could not be installed from PyPI, so the type check did not run")
fi
stage_done "type check"

GREENCTX_BUILD_DIR=$build GREENCTX_PYTHON=$python scripts/release.sh ||
  failures+=("the release: sdist, manylinux wheel from it, installed and tested (scripts/release.sh)")
stage_done "release (sdist, wheel, fresh install)"

for f in "${failures[@]}"; do echo "test-long: FAILED: $f" >&2; done
[ ${#failures[@]} -eq 0 ]
