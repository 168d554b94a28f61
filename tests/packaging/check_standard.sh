#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The C++ headers compiled as C++17 stop at greenctx/cxx_standard.hpp with one error that names
# the standard to ask for, from g++ and from nvcc (whose default for .cu files is C++17); as C++20
# they compile; cuda_compat.h compiles as C++17 and as C11.
#
#   check_standard.sh INCLUDE_DIR CUDA_INCLUDE_DIR CXX NVCC
set -uo pipefail
inc=$1 cuda_inc=$2 cxx=$3 nvcc=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
printf '#include <greenctx/greenctx.hpp>\nint main() { return 0; }\n' > "$tmp/cpp.cpp"
cp "$tmp/cpp.cpp" "$tmp/cu.cu"
printf '#include <greenctx/cuda_compat.h>\nint main(void) { return 0; }\n' > "$tmp/c.c"
cp "$tmp/c.c" "$tmp/compat.cpp"

refused() { # refused NAME COMMAND...: must fail with the message and with no other error
  local name=$1; shift
  if "$@" > "$tmp/out" 2>&1; then
    echo "FAIL: $name compiled"; failures=$((failures + 1)); return
  fi
  local errors
  errors=$(grep -c 'error:' "$tmp/out") # the #error, and the missing header that stops g++
  if ! grep -q "greenctx's C++ headers need C++20" "$tmp/out"; then
    echo "FAIL: $name failed without the message:"; head -20 "$tmp/out"; failures=$((failures + 1))
  elif [ "$errors" -gt 2 ]; then
    echo "FAIL: $name: $errors errors, expected the one message:"; head -20 "$tmp/out"
    failures=$((failures + 1))
  else
    echo "ok: $name refused with the message ($(grep -m1 "need C++20" "$tmp/out" | cut -c1-80)...)"
  fi
}
compiles() { # compiles NAME COMMAND...
  local name=$1; shift
  if "$@" > "$tmp/out" 2>&1; then echo "ok: $name compiles"; else
    echo "FAIL: $name did not compile:"; head -20 "$tmp/out"; failures=$((failures + 1)); fi
}
refused "g++ -std=c++17" "$cxx" -std=c++17 -fsyntax-only -I"$inc" -I"$cuda_inc" "$tmp/cpp.cpp"
refused "nvcc (its default standard)" "$nvcc" -arch=sm_90 -c -I"$inc" "$tmp/cu.cu" -o "$tmp/cu.o"
compiles "g++ -std=c++20" "$cxx" -std=c++20 -fsyntax-only -I"$inc" -I"$cuda_inc" "$tmp/cpp.cpp"
compiles "nvcc -std=c++20" "$nvcc" -std=c++20 -arch=sm_90 -c -I"$inc" "$tmp/cu.cu" -o "$tmp/cu.o"
compiles "cuda_compat.h as C++17" "$cxx" -std=c++17 -fsyntax-only -I"$inc" -I"$cuda_inc" "$tmp/compat.cpp"
compiles "cuda_compat.h as C11" cc -std=c11 -fsyntax-only -I"$inc" -I"$cuda_inc" "$tmp/c.c"
echo "standard check: $([ $failures -eq 0 ] && echo ok || echo "$failures failures")"
[ $failures -eq 0 ]
