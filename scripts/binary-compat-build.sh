#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds, on this machine, the programs of the GPU machine's binary-compatibility check
# (scripts/binary-compat-check.sh): programs written for CUDA 13.1 and built with the CUDA 13.5
# toolkit from PyPI and its own cudart, as people receive them, so that on a 13.0 driver they meet
# greenctx run --cuda-13.1 unmodified.
#   compat-tests-{static,shared}  tests/gpu/test_cuda_compat.cu with GREENCTX_KEEP_CUDART_API:
#                                 the guide's calls go to cudart 13.5's own functions
#   runtime-api-{static,shared}   examples/runtime_api.cu, the same way
#   driver-13-1                   tests/toolkit/driver_13_1.cpp: the driver API of 13.1, linked to
#                                 cuDevSmResourceSplit and cuStreamGetDevResource by name
#   cudart-probe                  tests/toolkit/cudart_probe.cpp (the version cudart is told)
# The shared-cudart programs find cudart 13.5 in lib/ beside them. Stripped, into
# build-gpu/binary-compat (GREENCTX_STAGE_DIR, default build-gpu), which the GPU run carries.
#
#   scripts/binary-compat-build.sh [CUDA_13_1_ROOT]   (default build/cuda-pypi-13.5.37, installed
#                                                      from PyPI when absent)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GREENCTX_BUILD_DIR:-build}
cuda=${1:-$build/cuda-pypi-13.5.37}
out=${GREENCTX_STAGE_DIR:-build-gpu}/binary-compat
[ -x "$cuda/bin/nvcc" ] || scripts/cuda-toolkit-pypi.sh "$cuda" --version 13.5.37
lib=$build/src/libgreenctx.a
[ -e "$lib" ] || { echo "binary-compat-build: $lib is missing: build $build first" >&2; exit 2; }
gtest=(/usr/lib/x86_64-linux-gnu/libgtest_main.a /usr/lib/x86_64-linux-gnu/libgtest.a)
for f in "${gtest[@]}"; do
  [ -e "$f" ] || { echo "binary-compat-build: $f is missing (apt install libgtest-dev)" >&2; exit 2; }
done
arch=${GREENCTX_CUDA_ARCH:-90}
rm -rf "$out"
mkdir -p "$out/lib" "$out/obj"
nvcc=("$cuda/bin/nvcc" -std=c++17 "-arch=sm_$arch" -O2 -Iinclude -I"$build/include"
      -DGREENCTX_KEEP_CUDART_API)
for rt in static shared; do
  "${nvcc[@]}" -cudart "$rt" tests/gpu/test_cuda_compat.cu tests/gpu/test_compat_recycle.cu \
    "$lib" "${gtest[@]}" -ldl -lpthread -Xlinker -rpath -Xlinker '$ORIGIN/lib' \
    -o "$out/compat-tests-$rt"
  "${nvcc[@]}" -cudart "$rt" examples/runtime_api.cu "$lib" -ldl -lpthread \
    -Xlinker -rpath -Xlinker '$ORIGIN/lib' -o "$out/runtime-api-$rt"
done
cp -L "$cuda/lib/libcudart.so.13" "$out/lib/"
# The driver-API program links libcuda by name; PyPI has no stub of it, so one is made of the
# names the program uses (soname libcuda.so.1, as the driver's).
c++ -std=c++17 -I"$cuda/include" -c tests/toolkit/driver_13_1.cpp -o "$out/obj/driver_13_1.o"
nm -u "$out/obj/driver_13_1.o" | awk '$2 ~ /^cu/ { print "void " $2 "(void) {}" }' \
  > "$out/obj/stub.c"
cc -shared -fPIC -Wl,-soname,libcuda.so.1 "$out/obj/stub.c" -o "$out/obj/libcuda.so"
c++ "$out/obj/driver_13_1.o" -L"$out/obj" -lcuda -o "$out/driver-13-1"
c++ -std=c++17 -I"$cuda/include" tests/toolkit/cudart_probe.cpp "$cuda/lib/libcudart_static.a" \
  -ldl -lpthread -lrt -o "$out/cudart-probe"
rm -rf "$out/obj"
for f in "$out"/*-*; do strip "$f"; done
"$cuda/bin/nvcc" --version | tail -n 1 > "$out/TOOLKIT"
git describe --always --dirty > "$out/COMMIT" 2>/dev/null || echo unknown > "$out/COMMIT"
du -sh "$out"
