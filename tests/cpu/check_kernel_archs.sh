#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The embedded kernels hold machine code for each architecture the build asked and the PTX of the
# newest (ctest cpu.kernels.architectures): cuobjdump lists the fatbin's ELF and PTX files, which
# must be exactly sm_A for each A in ARCHS and compute_PTX.
#
#   check_kernel_archs.sh CUOBJDUMP FATBIN ARCHS(comma-separated) PTX
set -uo pipefail
cuobjdump=$1 fatbin=$2 archs=$3 ptx=$4
elf=$("$cuobjdump" --list-elf "$fatbin" | sed -n 's/.*\.\(sm_[0-9]*[af]\?\)\.cubin$/\1/p' | sort -V | paste -sd,)
ptxs=$("$cuobjdump" --list-ptx "$fatbin" | sed -n 's/.*\.\(sm_[0-9]*[af]\?\)\.ptx$/\1/p' | paste -sd,)
want=$(tr ',' '\n' <<< "$archs" | sed 's/^/sm_/' | sort -V | paste -sd,)
echo "machine code: $elf"
echo "PTX: $ptxs"
status=0
[ "$elf" = "$want" ] || { echo "FAIL: machine code for $elf, expected $want"; status=1; }
[ "$ptxs" = "sm_$ptx" ] || { echo "FAIL: PTX for $ptxs, expected sm_$ptx (compute_$ptx)"; status=1; }
exit $status
