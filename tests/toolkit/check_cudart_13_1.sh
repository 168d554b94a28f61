#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# greenctx run --cuda-13.1 and the CUDA runtime as it really is (CPU tier, ctest
# cpu.toolkit.cudart_13_1): a program built with a CUDA 13.1+ toolkit's cudart (shared and static)
# runs over the tests' fake driver, which reports CUDA 13.0 and logs every cuGetProcAddress
# request. Plain, the runtime is told 13000 and asks for no ABI newer than that; through greenctx
# it is told 13010 and asks for cuDevSmResourceSplit, cuStreamGetDevResource (both stream
# variants) and cuLaunchHostFunc at 13010. The same program built with the CUDA 13.0 toolkit
# (CONTROL_CUDA, when it is 13.0) is told 13000 either way: only code that knows the 13.1 API
# sees the raised version. Then a program on the driver API written for 13.1
# (driver_13_1.cpp, linked to cuDevSmResourceSplit and cuStreamGetDevResource by name): plain it
# stops at the first 13.1 symbol, through greenctx it splits and every group reports its SMs. The
# fake cannot complete a runtime's start (it lacks the driver's
# private tables), so what is checked is the version and the lookups, which come first.
#
#   check_cudart_13_1.sh CUDA_13_1_ROOT CONTROL_CUDA_ROOT GREENCTX FAKE_LIBCUDA WORK_DIR
set -euo pipefail
[ $# -eq 5 ] || {
  echo "usage: $0 CUDA_13_1_ROOT CONTROL_CUDA_ROOT GREENCTX FAKE_LIBCUDA WORK_DIR" >&2
  exit 2
}
cuda=$1 control=$2 greenctx=$3 fake=$4 work=$5
src=$(cd "$(dirname "$0")" && pwd)/cudart_probe.cpp
mkdir -p "$work"
cd "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cuda_lib=$cuda/lib
[ -e "$cuda_lib/libcudart_static.a" ] || cuda_lib=$cuda/lib64
c++ -std=c++17 -I"$cuda/include" "$src" -L"$cuda_lib" -lcudart -Wl,-rpath,"$cuda_lib" \
  -o probe_shared
c++ -std=c++17 -I"$cuda/include" "$src" "$cuda_lib/libcudart_static.a" -ldl -lpthread -lrt \
  -o probe_static
programs=(probe_shared probe_static)
control_version=$(sed -n 's/^#define CUDART_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
  "$control/include/cuda_runtime_api.h" | head -n 1)
if [ "${control_version:-0}" -ge 13000 ] && [ "$control_version" -lt 13010 ]; then
  control_lib=$control/lib64
  [ -e "$control_lib/libcudart_static.a" ] || control_lib=$control/lib
  c++ -std=c++17 -I"$control/include" "$src" "$control_lib/libcudart_static.a" -ldl -lpthread \
    -lrt -o probe_control
else
  echo "no CUDA 13.0 runtime at $control (CUDART_VERSION ${control_version:-none}): the control" \
       "program is not built"
fi

export LD_LIBRARY_PATH=$(dirname "$fake") GREENCTX_LIBCUDA=$fake
# run NAME PROGRAM [greenctx]: stdout to NAME.out, stderr to NAME.err, lookups to NAME.lookups
run() {
  local name=$1 program=$2
  rm -f "$name.lookups"
  if [ "${3:-}" = greenctx ]; then
    GREENCTX_FAKE_LOOKUP_LOG=$PWD/$name.lookups "$greenctx" run --cuda-13.1 -- "./$program" \
      > "$name.out" 2> "$name.err" || fail "$name exited with $?"
  else
    GREENCTX_FAKE_LOOKUP_LOG=$PWD/$name.lookups "./$program" > "$name.out" 2> "$name.err" ||
      fail "$name exited with $?"
  fi
  touch "$name.lookups"
}
# Requests at an ABI newer than 13.0, one line each, sorted.
newer() { awk '$2 > 13000' "$1.lookups" | sort -u; }

for p in "${programs[@]}"; do
  before=$failures
  run "$p.plain" "$p"
  grep -q '^driver 13000 (0) runtime 13' "$p.plain.out" || fail "$p plain: $(cat "$p.plain.out")"
  [ -z "$(newer "$p.plain")" ] || fail "$p plain asked for newer ABIs: $(newer "$p.plain")"
  run "$p.through" "$p" greenctx
  grep -q '^driver 13010 (0)' "$p.through.out" ||
    fail "$p through greenctx: $(cat "$p.through.out")"
  for want in "cuDevSmResourceSplit 13010 0" "cuStreamGetDevResource 13010 0" \
              "cuStreamGetDevResource 13010 2" "cuLaunchHostFunc 13010 0"; do
    newer "$p.through" | grep -qx "$want" || fail "$p through greenctx did not ask for $want"
  done
  grep -q 'is told driver version 13010 (the driver is 13000)' "$p.through.err" ||
    fail "$p through greenctx: stderr does not say what was raised: $(cat "$p.through.err")"
  [ "$failures" -eq "$before" ] && echo "$p: plain told 13000, asked for nothing newer; through greenctx told 13010, asked for:" \
       $(newer "$p.through" | awk '{print $1 "@" $2 "/" $3}')
done
if [ -x probe_control ]; then
  before=$failures
  run control.through probe_control greenctx
  grep -q '^driver 13000 (0)' control.through.out ||
    fail "the CUDA 13.0 runtime through greenctx: $(cat control.through.out)"
  ! grep -q 'is told driver version' control.through.err ||
    fail "the CUDA 13.0 runtime was told a raised version"
  [ "$failures" -eq "$before" ] && echo "probe_control (CUDA $control_version runtime) through greenctx: told 13000, as plain"
fi
# The driver-API program, linked against a stub of the names it uses (PyPI has no libcuda stub).
c++ -std=c++17 -I"$cuda/include" -c "$(dirname "$src")/driver_13_1.cpp" -o driver_13_1.o
nm -u driver_13_1.o | awk '$2 ~ /^cu/ { print "void " $2 "(void) {}" }' > stub.c
mkdir -p stub
cc -shared -fPIC -Wl,-soname,libcuda.so.1 stub.c -o stub/libcuda.so
c++ driver_13_1.o -Lstub -lcuda -o driver_13_1
before=$failures
if ./driver_13_1 > driver.plain.out 2> driver.plain.err ||
   ! grep -q 'undefined symbol: cuDevSmResourceSplit' driver.plain.err; then
  fail "driver_13_1 plain should stop at cuDevSmResourceSplit: $(cat driver.plain.out driver.plain.err)"
fi
rm -f driver.through.lookups
GREENCTX_FAKE_LOOKUP_LOG=$PWD/driver.through.lookups "$greenctx" run --cuda-13.1 -- \
  ./driver_13_1 64 8 0 > driver.through.out 2> driver.through.err ||
  fail "driver_13_1 through greenctx exited with $?: $(cat driver.through.out driver.through.err)"
grep -q '^group 0: asked 64, got 64 SMs (co-scheduled 8), its stream reports 64' \
  driver.through.out || fail "driver_13_1 group 0: $(cat driver.through.out)"
grep -q '^group 1: asked 8, got 8 SMs' driver.through.out || fail "driver_13_1 group 1"
[ "$failures" -eq "$before" ] && echo "driver_13_1: plain stops at the first 13.1 symbol;" \
  "through greenctx:" $(tr '\n' ';' < driver.through.out)
[ "$failures" -eq 0 ] && echo "cudart 13.1+ under greenctx run --cuda-13.1: all checks passed"
exit $((failures > 0))
