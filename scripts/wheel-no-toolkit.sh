#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# `pip wheel .` as on a machine with Python and no CUDA toolkit, then the wheel
# installed into a fresh virtual environment away from the source tree and its installed-package
# tests run there. The installed toolkit is hidden from the build: no CUDA folder on PATH, CUDACXX
# and CUDAToolkit_ROOT unset, its folders ignored by CMake's searches
# (scripts/lib/hide-system-cuda.sh); the build must take the toolkit from PyPI itself
# (cmake/cuda_from_pypi.cmake) and say so. GREENCTX_CUDA_FROM_PYPI=ON makes it do so: the
# automatic choice, taken when no nvcc is found, cannot be reached on a machine that has a toolkit
# (these machines also have a /usr/local/bin/nvcc wrapper, a file CMake cannot be told to ignore).
# Needs network access to PyPI. Writes under BUILD/wheel-no-toolkit/ (BUILD: GREENCTX_BUILD_DIR,
# default build): pip.log, the wheel, venv/. Exit 0 passed, 1 failed.
#
#   scripts/wheel-no-toolkit.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${GREENCTX_BUILD_DIR:-build}
python=${GREENCTX_PYTHON:-python3}
work="$build/wheel-no-toolkit"
rm -rf "$work" && mkdir -p "$work"
work=$(cd "$work" && pwd)
. scripts/lib/hide-system-cuda.sh
hide_system_cuda
join() { local IFS=';'; echo "$*"; }
path=$(tr ':' '\n' <<< "$PATH" | grep -v -i cuda | paste -sd: -)
echo "wheel-no-toolkit: pip wheel . with PATH=$path and ${#ignore_prefixes[@]} toolkit folder(s) hidden"
if ! env -u CUDACXX -u CUDAToolkit_ROOT -u CUDA_HOME -u CUDA_PATH PATH="$path" \
     "$python" -m pip wheel -v --no-deps --disable-pip-version-check -w "$work" . \
     -C build-dir="$work/build" -C cmake.define.GREENCTX_CUDA_FROM_PYPI=ON \
     -C cmake.define.CMAKE_IGNORE_PREFIX_PATH="$(join "${ignore_prefixes[@]}")" \
     -C cmake.define.CMAKE_IGNORE_PATH="$(join "${ignore_paths[@]}")" > "$work/pip.log" 2>&1; then
  tail -n 40 "$work/pip.log"
  echo "wheel-no-toolkit: FAILED: pip wheel (the log: $work/pip.log)"
  exit 1
fi
failed=0
if grep -q "greenctx: .*: CUDA .*'s pieces from PyPI" "$work/pip.log"; then
  grep -m1 "pieces from PyPI" "$work/pip.log"
else
  echo "wheel-no-toolkit: FAILED: the build did not take the toolkit from PyPI (it found one)"
  failed=1
fi
wheel=$(ls "$work"/greenctx-*.whl)
echo "wheel-no-toolkit: built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"
"$python" -m venv "$work/venv" &&
  "$work/venv/bin/python" -m pip install -q --disable-pip-version-check pytest "$wheel" || {
  echo "wheel-no-toolkit: FAILED: installing the wheel"; exit 1; }
# Away from the source tree, so that `import greenctx` is the installed package.
(cd "$work" && "$work/venv/bin/python" -m pytest -rs -p no:cacheprovider \
   "$OLDPWD/python/tests/test_installed.py" "$OLDPWD/python/tests/test_cpu.py") || failed=1
(cd "$work" && "$work/venv/bin/python" -c 'import greenctx; print("imported", greenctx.__file__)')
echo "wheel-no-toolkit: $([ $failed -eq 0 ] && echo PASSED || echo FAILED)"
exit $failed
