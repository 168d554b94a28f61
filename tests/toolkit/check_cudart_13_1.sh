#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# greenctx run --cuda-13.1 and the CUDA runtime as it really is (CPU tier, ctest
# cpu.toolkit.cudart_13_1): a program built with a CUDA 13.1+ toolkit's cudart (shared and static)
# runs over the tests' fake driver, which reports CUDA 13.0 and logs every cuGetProcAddress
# request. Plain and through greenctx alike, the runtime is told 13000 and asks for no ABI newer
# than that (a runtime checks the version against the driver; the static one is said to be out
# of greenctx's reach). The same program built with the CUDA 13.0 toolkit (CONTROL_CUDA, when it
# is 13.0) is told 13000 either way. Then a program on the driver API written for 13.1
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
# The program's requests at an ABI newer than 13.0 ("NAME VERSION FLAGS"), one line each, sorted:
# those of its process (NAME.MODE: the program's own name first), not greenctx's.
newer() { awk -v p="${1%%.*}" '$2 > 13000 && $4 == p { print $1, $2, $3 }' "$1.lookups" | sort -u; }
# How many requests the program's process made at all (so that "nothing newer" means something).
asked() { awk -v p="${1%%.*}" '$4 == p' "$1.lookups" | wc -l; }

# A runtime checks the driver's version against the driver (told 13010 by a 13.0 driver, cudart
# 13.5 refuses every call with error 103 on driver 580), so greenctx never raises it: through
# greenctx the runtime is told 13000 and asks for nothing newer, as plain. The shared runtime's
# 13.1 calls are answered by the preload library instead (the PreloadCuda131 tests); of a static
# one, stderr says that it is out of reach and what would work.
for p in "${programs[@]}"; do
  before=$failures
  run "$p.plain" "$p"
  grep -q '^driver 13000 (0) runtime 13' "$p.plain.out" || fail "$p plain: $(cat "$p.plain.out")"
  [ -z "$(newer "$p.plain")" ] || fail "$p plain asked for newer ABIs: $(newer "$p.plain")"
  run "$p.through" "$p" greenctx
  grep -q '^driver 13000 (0)' "$p.through.out" ||
    fail "$p through greenctx: $(cat "$p.through.out")"
  [ "$(asked "$p.through")" -gt 100 ] ||
    fail "$p through greenctx: $(asked "$p.through") requests of its own in the log"
  [ -z "$(newer "$p.through")" ] ||
    fail "$p through greenctx asked for newer ABIs: $(newer "$p.through")"
  ! grep -q 'is told driver version' "$p.through.err" ||
    fail "$p through greenctx: the runtime was told a raised version: $(cat "$p.through.err")"
  static_said=$(grep -c 'has a CUDA 13.1+ runtime linked in statically' "$p.through.err" || true)
  case $p in
    probe_static) [ "$static_said" -eq 1 ] ||
      fail "$p through greenctx: stderr does not say the static runtime is out of reach: $(cat "$p.through.err")" ;;
    *) [ "$static_said" -eq 0 ] || fail "$p through greenctx: a shared runtime called static" ;;
  esac
  [ "$failures" -eq "$before" ] &&
    echo "$p: told 13000 plain and through greenctx, asked for nothing newer either way" \
         "($(asked "$p.through") requests through greenctx)"
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
