#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# What needs several GPUs, in one call that fits a 2-GPU lease's 10-minute command:
# the two-device GPU tests, info/verify on every device, `greenctx run` over both devices against
# the plain run (the two-device CUDA program and data-parallel PyTorch training), the full `greenctx bench --comm` sweep and examples/comm_overlap.py (through the
# Python check). The whole single-GPU tier is scripts/gpu-check.sh. Run from the repository root
# with a staged build (GREENCTX_BUILD, default build-gpu). Writes under $OUT (or
# ./gpu-check-multi-out):
#
#   gpu-check-multi.log         what each step ran and its exit status
#   two-devices-tests.json      greenctx_gpu_tests --gtest_filter='TwoDevices*'
#   cli/                        the info/verify checks' outputs
#   two_devices/                tests/run/check_run.py's logs for greenctx_run_two_devices
#   bench-comm.{json,csv,svg,md} the sweep (GPU_CHECK_COMM_QUICK=1: --quick instead)
#   python/                     scripts/gpu-check-python.sh, comm_overlap.json among them
#   rest.tar.gz                 everything but the log and bench-comm.*, packed at the end
#
# Exits 77 with fewer than 2 GPUs, 1 when a step failed. NVLink multicast stays off
# (NCCL_NVLS_ENABLE=0) unless the environment sets it. GPU_CHECK_MULTI_ONE_GPU_TEST=1 runs it all
# on one GPU anyway, to test this script: the bench and the example in their one-GPU test modes
# (numbers that answer nothing), and a step that skips for want of a second GPU (exit 77) passes.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
. scripts/lib/timed-steps.sh
check_output gpu-check-multi-out gpu-check-multi.log
bin="${GREENCTX_BUILD:-build-gpu}"
. scripts/lib/find-nccl.sh # GREENCTX_NCCL_LIBRARY: torch's NCCL unless set
cli="$bin/tools/greenctx/greenctx"
export NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}"
one_gpu_test="${GPU_CHECK_MULTI_ONE_GPU_TEST:-}"
[ -n "$one_gpu_test" ] && step_also_ok=77 # a step skipped for want of a second GPU

ngpus=$(nvidia-smi -L 2>/dev/null | wc -l)
{
  echo "greenctx multi-GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat "$bin/COMMIT" 2>/dev/null || git describe --always --dirty 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv
  nvidia-smi topo -m 2>/dev/null || true
  echo "NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
} 2>&1 | tee "$log"
if [ -n "$one_gpu_test" ]; then
  echo "GPU_CHECK_MULTI_ONE_GPU_TEST is set: testing this script on $ngpus GPU(s)" | tee -a "$log"
  export GREENCTX_COMM_ONE_GPU_TEST=self
elif [ "$ngpus" -lt 2 ]; then
  echo "gpu-check-multi: needs 2 GPUs or more; nvidia-smi -L lists $ngpus" | tee -a "$log"
  exit 77
fi

step two-devices-tests 120 "$bin/tests/greenctx_gpu_tests" --gtest_filter='TwoDevices*' \
  --gtest_output="json:$out/two-devices-tests.json"
step info-verify 300 env OUT="$out/cli" GREENCTX_REQUIRE_GPU=1 \
  ctest --test-dir "$bin" -L gpu -R '^cli_gpu[.](info|verify)' -V --no-tests=error
mkdir -p "$out/two_devices"
step run-two-devices 300 python3 tests/run/check_run.py --cli "$cli" --name two_devices \
  --timeout 90 --out-dir "$out/two_devices" --sms 64 --devices all --smid --expect-report-clean \
  -- "$bin/tests/greenctx_run_two_devices"
sweep=()
[ -n "${GPU_CHECK_COMM_QUICK:-}" ] && sweep=(--quick)
step run-torch-ddp 300 python3 tests/run/check_run.py --cli "$cli" --name torch_ddp \
  --timeout 90 --out-dir "$out/two_devices" --sms 16 --devices all --tolerance 1e-5 \
  --expect-report-clean -- python3 tests/run/torch_ddp.py
step comm-bench "${GPU_CHECK_COMM_TIMEOUT:-330}" "$cli" bench --comm "${sweep[@]}" \
  --comm-timeout 150 --json "$out/bench-comm.json" --csv "$out/bench-comm.csv" \
  --svg "$out/bench-comm.svg" --markdown "$out/bench-comm.md"
if [ -z "${GPU_CHECK_SKIP_PYTHON:-}" ]; then
  step python 300 env OUT="$out/python" GREENCTX_BUILD="$bin" GPU_CHECK_STEP_TIMEOUT=150 \
    scripts/gpu-check-python.sh
fi

# The device tool returns at most 8 files: the log, the bench's four and one archive of the rest.
(cd "$out" && tar -czf rest.tar.gz --exclude='bench-comm.*' --exclude=gpu-check-multi.log \
  --exclude=rest.tar.gz . && find . -mindepth 1 -maxdepth 1 ! -name 'bench-comm.*' \
  ! -name gpu-check-multi.log ! -name rest.tar.gz -exec rm -rf {} +)

finish_checks "MULTI-GPU CHECK"
