#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# cuda_compat.h with CUDA 13.1+ headers routes the 13.1 functions to greenctx (CPU tier, ctest
# cpu.toolkit.routing): guide-style programs compiled with such a toolkit's nvcc must call
# greenctx_cuda*, never cudart's own 13.1 functions, which fail on older drivers (cudart 13.5's
# cudaDevSmResourceSplit returns cudaErrorCallRequiresNewerDriver on driver 580).
#
#   check_routing.sh NVCC SOURCE_DIR LIBGREENCTX WORK_DIR ARCH
#
# For examples/runtime_api.cu (compiled and linked with the shared cudart, so that the program's
# imports from cudart can be listed) and tests/gpu/test_cuda_compat.cu (compiled): no undefined
# symbol of a 13.1 function's name, and greenctx_NAME for each 13.1 function the source names.
# Control: runtime_api.cu with GREENCTX_KEEP_CUDART_API must import cudart's names, so the check
# can see them. The names are read from the header's routing section (its #define lines).
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 NVCC SOURCE_DIR LIBGREENCTX WORK_DIR ARCH" >&2; exit 2; }
nvcc=$1 src=$2 lib=$3 work=$4 arch=$5
header=$src/include/greenctx/cuda_compat.h
mkdir -p "$work"
cd "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

names=$(sed -n 's/^#define \(cuda[A-Za-z]*\) greenctx_\1$/\1/p' "$header")
if [ "$(echo "$names" | wc -l)" -lt 15 ]; then
  echo "FAIL: routing section of $header not found"
  exit 1
fi

"$nvcc" --version | tail -n 1
flags=(-std=c++17 "-arch=sm_$arch" -I"$src/include")
# The headers this nvcc uses must be 13.1 or newer (older ones take the forwarder branch, which
# would pass the checks below without routing anything).
printf '#include <greenctx/cuda_compat.h>\n' > probe.cu
"$nvcc" "${flags[@]}" -E -Xcompiler -dM probe.cu -o probe.macros
version=$(sed -n 's/^#define CUDART_VERSION \([0-9]*\).*/\1/p' probe.macros)
echo "CUDART_VERSION $version"
if [ -z "$version" ] || [ "$version" -lt 13010 ]; then
  echo "FAIL: $nvcc has headers older than 13.1"
  exit 1
fi
grep -q '^#define GREENCTX_ROUTES_CUDA_API 1' probe.macros || fail "routing is not the default"

# check_symbols WHAT SYMBOL_LIST SOURCE: no 13.1 name, greenctx_NAME for each the source uses.
check_symbols() {
  local what=$1 symbols=$2 source=$3 n used=0 before=$failures
  for n in $names; do
    if grep -qx "$n" "$symbols"; then fail "$what calls cudart's $n"; fi
    if grep -qw "$n" "$source"; then
      used=$((used + 1))
      grep -qx "greenctx_$n" "$symbols" || fail "$what does not call greenctx_$n"
    fi
  done
  [ "$failures" -eq "$before" ] &&
    echo "$what: $used 13.1 functions named, all routed to greenctx_cuda*"
  return 0
}

# The example, linked: its dynamic imports are what it calls in cudart and libc.
"$nvcc" "${flags[@]}" -c "$src/examples/runtime_api.cu" -o runtime_api.o
nm -u runtime_api.o | awk '{print $2}' > runtime_api.o.syms
check_symbols runtime_api.o runtime_api.o.syms "$src/examples/runtime_api.cu"
"$nvcc" "${flags[@]}" -cudart shared runtime_api.o "$lib" -ldl -lpthread -o runtime_api
nm -D --undefined-only runtime_api | awk '{print $2}' | sed 's/@.*//' > runtime_api.imports
grep -qx cudaMalloc runtime_api.imports || fail "runtime_api does not import cudart (cudaMalloc)"
before=$failures
for n in $names; do
  if grep -qx "$n" runtime_api.imports; then fail "runtime_api imports cudart's $n"; fi
done
[ "$failures" -eq "$before" ] &&
  echo "runtime_api (linked, shared cudart): imports $(grep -c '^cuda' runtime_api.imports)" \
       "cudart functions, none of the 13.1 ones"

# The guide's examples as tests: every function of the API.
"$nvcc" "${flags[@]}" -c "$src/tests/gpu/test_cuda_compat.cu" -o test_cuda_compat.o
nm -u test_cuda_compat.o | awk '{print $2}' > test_cuda_compat.o.syms
check_symbols test_cuda_compat.o test_cuda_compat.o.syms "$src/tests/gpu/test_cuda_compat.cu"

# Control: the opt-out keeps cudart's functions, and the check sees them.
"$nvcc" "${flags[@]}" -DGREENCTX_KEEP_CUDART_API -c "$src/examples/runtime_api.cu" -o keep.o
nm -u keep.o | awk '{print $2}' > keep.o.syms
grep -qx cudaDevSmResourceSplit keep.o.syms ||
  fail "with GREENCTX_KEEP_CUDART_API runtime_api.o does not call cudart's cudaDevSmResourceSplit"
if grep -q '^greenctx_cuda' keep.o.syms; then
  fail "with GREENCTX_KEEP_CUDART_API runtime_api.o still calls greenctx_cuda*"
else
  echo "control: GREENCTX_KEEP_CUDART_API calls cudart's own functions"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "routing: ok"
