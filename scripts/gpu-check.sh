#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The whole GPU tier in one go, for the GPU machine: run from the repository root with a build/
# made beforehand (scripts/setup.sh) and carried along. Writes logs and JSON under $OUT (or
# ./gpu-check-out) and exits non-zero if any step failed. GREENCTX_BUILD names the build folder
# (default build/; scripts/stage-gpu.sh makes a small stripped one, build-gpu/, to carry).
#
#   scripts/gpu-check.sh            everything: tests, CLI checks (ctest -L gpu), demo, benchmarks
#
# GPU_CHECK_GROUPS picks groups of steps (default: all of them), so that the whole check can be
# spread over several calls of a lent machine's 10-minute command limit:
#   tests      the GPU, compat, CPU, library, plan and no-driver test programs, and a PyTorch C++
#              extension built on the spot against build/src/libgreenctx.a
#   cli        the CLI's checks (tests/cli_gpu/checks.txt)
#   semantics  CUDA's guarantees under greenctx run (scripts/semantics-check.sh)
#   outside    programs and libraries nobody here wrote, plain and confined (outside-check.sh)
#   binary-compat  programs built for CUDA 13.1 with the 13.5 toolkit, plain and through greenctx
#              run --cuda-13.1 (binary-compat-check.sh; scripts/binary-compat-build.sh makes them),
#              and the outside programs again with --cuda-13.1 on
#   compare    cuBLAS and PyTorch plain and on 16 SMs; scale on a GEMM, a memory-bound kernel and
#              a PyTorch program (wall time, GPU phase, the number it prints)
#   bench      greenctx bench, the overhead/repartition/pool benchmarks
#   overhead   what confinement costs (scripts/overhead-check.sh)
#   processes  processes on the pieces of one split under an MPS daemon of its own
#              (tests/run/mps_pieces.sh; skipped, said, where MPS cannot start)
#   processes-bench  a critical process beside a background process in each placement, with and
#              without MPS (scripts/processes-bench.sh), and two PyTorch programs the same way
#              (scripts/torch-processes.sh); skipped, said, without MPS or torch
#   python     the Python module's check (scripts/gpu-check-python.sh)
#   tune       greenctx tune's benchmarks: three workload pairs, both searches, twice each
#              (scripts/tune-bench.sh)
#   comm       the NCCL sweep (2 GPUs or more)
#   compute-sanitizer  memcheck, racecheck and synccheck on the GPU test programs
#              (scripts/compute-sanitizer-check.sh); only when named, not by default
# GPU_CHECK_SKIP_BENCH, GPU_CHECK_SKIP_SEMANTICS and GPU_CHECK_SKIP_PYTHON still leave their group
# out.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out"
log="$out/gpu-check.log"
bin="${GREENCTX_BUILD:-build}"
cli="$bin/tools/greenctx/greenctx"
. scripts/lib/find-nccl.sh # GREENCTX_NCCL_LIBRARY: torch's NCCL unless set
failed=()
groups=" ${GPU_CHECK_GROUPS:-tests cli semantics outside binary-compat processes processes-bench compare bench overhead python tune comm} "
[ -n "${GPU_CHECK_SKIP_BENCH:-}" ] && groups=${groups/ bench / }
[ -n "${GPU_CHECK_SKIP_SEMANTICS:-}" ] && groups=${groups/ semantics / }
[ -n "${GPU_CHECK_SKIP_PYTHON:-}" ] && groups=${groups/ python / }
want() { [[ "$groups" == *" $1 "* ]]; }

limit=${GPU_CHECK_STEP_TIMEOUT:-180} # seconds per step: a hang costs one step, not the lease
step() { # step NAME COMMAND...: runs it, appends to the log, remembers failures
  local name=$1; shift
  { echo; echo "=== $name: $*"; } | tee -a "$log"
  timeout "$limit" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc" | tee -a "$log"
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}

{
  echo "greenctx GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat "$bin/COMMIT" 2>/dev/null || git describe --always --dirty 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv
  echo "CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-unset}"
  ldd "$cli"
} 2>&1 | tee "$log"

echo "groups:$groups" | tee -a "$log"
if want tests; then
step gpu-tests "$bin/tests/greenctx_gpu_tests" --gtest_output="json:$out/gpu-tests.json"
# The CUDA 13.1 runtime API (cuda_compat.h) as guide-style CUDA code, then the work-queue test
# again with 32 connections: the reported limit must follow CUDA_DEVICE_MAX_CONNECTIONS.
step compat-tests "$bin/tests/greenctx_cuda_compat_tests" --gtest_output="json:$out/compat-tests.json"
step compat-workqueue-32 env CUDA_DEVICE_MAX_CONNECTIONS=32 "$bin/tests/greenctx_cuda_compat_tests" \
  --gtest_filter='*workqueue*'
step cpu-tests env GREENCTX_CLI="$cli" GREENCTX_SOURCE_DIR="$PWD" "$bin/tests/greenctx_cpu_tests"
step lib-tests "$bin/tests/greenctx_lib_tests"
step plan-tests "$bin/tests/greenctx_plan_tests"
step no-driver-tests env GREENCTX_LIBCUDA=/nonexistent/libcuda.so.1 "$bin/tests/greenctx_no_driver_tests"
# A PyTorch C++ extension (torch's cpp_extension, -std=c++20) on a 16,rest partition set; 77 from
# the check: no torch with CUDA here.
step torch-extension bash -c "python3 tests/gpu/torch_extension/check.py . '$bin/src/libgreenctx.a' \
    '$out/torch-extension-build'; rc=\$?; [ \$rc -eq 77 ] && exit 0; exit \$rc"
fi
# The CLI's checks (tests/cli_gpu/checks.txt: info, verify, split, run, scale refusals, examples,
# demo), each a ctest cli_gpu.* with label gpu: a skip counts as a failure here.
if want cli; then
  step_limit=$limit limit=${GPU_CHECK_CLI_TIMEOUT:-900}
  step cli-checks env OUT="$out/cli" GREENCTX_REQUIRE_GPU=1 GPU_CHECK_STEP_TIMEOUT="$step_limit" \
    ctest --test-dir "$bin" -L gpu -R '^cli_gpu[.]' -V --no-tests=error \
    --output-junit "$out/cli-checks.xml"
  limit=$step_limit
fi
# The CUDA guarantees under greenctx run (tests/run, docs/run-design.md): every program plain and
# confined with the same output, --strict, thread churn, the cost of confinement.
if want semantics; then
  step_limit=$limit limit=${GPU_CHECK_SEMANTICS_TIMEOUT:-1200}
  step semantics env OUT="$out/semantics" GREENCTX_BUILD="$bin" scripts/semantics-check.sh
  limit=$step_limit
fi
# Programs and libraries nobody here wrote (JAX, CuPy, numba-cuda, Triton, torch.compile,
# transformers, cuda.core, CUDA IPC, cooperative and persistent kernels, clusters): plain and
# confined, the same output; the numba check needs the numpy 2.2 wheel in .whl/.
if want outside; then
  step_limit=$limit limit=${GPU_CHECK_OUTSIDE_TIMEOUT:-1200}
  step outside env OUT="$out/outside" GREENCTX_BUILD="$bin" scripts/outside-check.sh
  limit=$step_limit
fi
if want binary-compat; then
  step binary-compat env OUT="$out/binary-compat" GREENCTX_BUILD="$bin" \
    scripts/binary-compat-check.sh
  step_limit=$limit limit=${GPU_CHECK_OUTSIDE_TIMEOUT:-1200}
  step outside-cuda-13.1 env OUT="$out/outside-cuda-13.1" GREENCTX_BUILD="$bin" \
    OUTSIDE_RUN_OPTIONS=--cuda-13.1 scripts/outside-check.sh
  limit=$step_limit
fi
if want compare; then
wl="$bin/tests/greenctx_run_workload"
# cuBLAS and PyTorch, confined and not: same checksum, slower on fewer SMs.
compare() { # compare NAME UNCONFINED_CMD... -- : runs it plain and on 16 SMs, compares
  local name=$1; shift
  step "$name-all" bash -o pipefail -c "$* | tee '$out/$name-all.txt'"
  step "$name-16" bash -o pipefail -c "$cli run --sms 16 -- $* | tee '$out/$name-16.txt'"
  step "$name-compare" python3 scripts/compare-runs.py "$out/$name-all.txt" "$out/$name-16.txt"
}
compare cublas "$wl" gemm 8192 10
compare torch python3 tests/gpu/torch_matmul.py 8192 10
# greenctx scale on a GEMM (cuBLAS) and a memory-bound kernel; results with the others.
mkdir -p "$out/scale"
for w in "gemm 8192 10" "memory 2048 20"; do
  name=${w%% *}
  step "scale-$name" "$cli" scale --sms "${GPU_CHECK_SCALE_SMS:-8,16,32,48,64,96,128,132}" \
    --repeat "${GPU_CHECK_SCALE_REPEAT:-3}" \
    --json "$out/scale/scale-$name.json" --csv "$out/scale/scale-$name.csv" \
    --svg "$out/scale/scale-$name.svg" --markdown "$out/scale/scale-$name.md" -- "$wl" $w
done
# A PyTorch program whose wall time is mostly importing torch: the whole program's time, its GPU
# phase, and the time it prints for its matmuls.
for metric in wall gpu-time 'regex:matmuls: ([0-9.]+) s'; do
  name=torch-${metric%%:*}
  step "scale-$name" "$cli" scale --sms "${GPU_CHECK_TORCH_SCALE_SMS:-16,32,64}" \
    --repeat "${GPU_CHECK_SCALE_REPEAT:-3}" --metric "$metric" \
    --json "$out/scale/scale-$name.json" --csv "$out/scale/scale-$name.csv" \
    --svg "$out/scale/scale-$name.svg" --markdown "$out/scale/scale-$name.md" \
    -- python3 benchmarks/torch_matmuls.py
done
fi

if want processes; then
  # 77 from the script: MPS could not be started on this machine (it says why): not a failure.
  step processes-mps bash -c "tests/run/mps_pieces.sh '$bin' '$out/processes'; rc=\$?;
    if [ \$rc -eq 77 ]; then echo 'processes: SKIPPED: MPS unavailable here'; exit 0; fi; exit \$rc"
fi
if want processes-bench; then
  step processes-bench bash -c "OUT='$out/processes-bench' GREENCTX_BUILD='$bin' scripts/processes-bench.sh; rc=\$?;
    if [ \$rc -eq 77 ]; then echo 'processes-bench: SKIPPED: no GPU or no MPS here'; exit 0; fi; exit \$rc"
  step processes-torch bash -c "OUT='$out/processes-torch' GREENCTX_BUILD='$bin' scripts/torch-processes.sh; rc=\$?;
    if [ \$rc -eq 77 ]; then echo 'processes-torch: SKIPPED: no torch, GPU or MPS here'; exit 0; fi; exit \$rc"
fi

# cuBLAS for the GEMM workloads of bench and tune (opened at run time).
if [ -z "${GREENCTX_CUBLAS:-}" ]; then
  for p in /usr/local/cuda/lib64/libcublas.so.13 \
           "$(python3 -c 'import nvidia.cublas as m; print(list(m.__path__)[0])' 2>/dev/null)/lib/libcublas.so.13"; do
    [ -e "$p" ] && export GREENCTX_CUBLAS="$p" && break
  done
fi
echo "GREENCTX_CUBLAS=${GREENCTX_CUBLAS:-unset}" | tee -a "$log"
if ! want bench; then
  echo "benchmarks skipped (group bench not in GPU_CHECK_GROUPS, or GPU_CHECK_SKIP_BENCH set)" |
    tee -a "$log"
else
# Benchmarks: results (JSON with raw samples, CSV, SVG, markdown) go to $out/results and are
# packed into one archive at the end (the device tool returns at most 8 files).
res="$out/results"
mkdir -p "$res"
bench() { # bench NAME [VAR=VALUE...] ARGS...: one `greenctx bench` run with every output kept
  local name=$1; shift
  local vars=()
  while [[ "${1:-}" == *=* ]]; do vars+=("$1"); shift; done
  step "bench-$name" env "${vars[@]}" "$cli" bench "$@" --json "$res/bench-$name.json" --csv "$res/bench-$name.csv" \
    --svg "$res/bench-$name.svg" --markdown "$res/bench-$name.md"
}
bench spin-kernel --background spin --critical kernel
# The same with 32 hardware work queues instead of the default 8: does the front end explain what
# is left of the interference between partitions?
bench spin-kernel-conn32 CUDA_DEVICE_MAX_CONNECTIONS=32 --background spin --critical kernel
bench memory-kernel --background memory --critical kernel
bench gemm-kernel --background gemm --critical kernel
bench gemm-gemm --background gemm --critical gemm
# The memory-bound background shrunk to N SMs (8, 16, 32, 64) around each critical
# arrival through a pool of layouts, against the static 16,rest split: isolation <= 1.2 with the
# background >= 0.8 of its static rate (the verdicts are in the JSON and markdown; like the other
# bench steps it does not fail on a missed target).
bench adaptive --adaptive
step overhead "$bin/benchmarks/greenctx_overhead_bench" --benchmark_repetitions=10 \
  --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true --benchmark_out="$res/overhead.json" \
  --benchmark_out_format=json
# Repartitioning through cuda_compat.h (split, two green contexts, a stream each, one kernel,
# destroy all), 16 and 32 SMs in turn: time per cycle and device-memory growth.
step repartition "$bin/benchmarks/greenctx_repartition_bench" --cycles 10000 --json "$res/repartition.json"
# Pool: creation time, device memory, contexts, streams and the switch time over 1e6 switches.
step pool "$bin/benchmarks/greenctx_pool_bench" --switches 1000000 --json "$res/pool.json"
tar -czf "$out/results.tar.gz" -C "$out" results && rm -rf "$res"
fi

# What confinement costs: launch-bound work on all SMs, plain and confined, 10 rounds.
if want overhead; then
  step_limit=$limit limit=${GPU_CHECK_OVERHEAD_TIMEOUT:-600}
  step overhead-check env OUT="$out/overhead" GREENCTX_BUILD="$bin" scripts/overhead-check.sh
  limit=$step_limit
fi

if want tune; then
  step tune env OUT="$out/tune" GREENCTX_BUILD="$bin" scripts/tune-bench.sh
fi

# The Python module, its torch tests and the PyTorch example (builds the module on this machine).
if want python && [ -x scripts/gpu-check-python.sh ]; then
  step python env OUT="$out/python" GREENCTX_BUILD="$bin" \
    GPU_CHECK_STEP_TIMEOUT="${GPU_CHECK_PYTHON_STEP_TIMEOUT:-240}" scripts/gpu-check-python.sh
fi

# compute-sanitizer (memcheck, racecheck, synccheck) over the GPU and compat-layer test programs: its own
# group, not in the default list (about six minutes). Exit 77 where it cannot run on this host.
if want compute-sanitizer; then
  saved_limit=$limit limit=${GPU_CHECK_SANITIZER_TIMEOUT:-1000}
  step compute-sanitizer env OUT="$out/compute-sanitizer" GREENCTX_BUILD="$bin" \
    scripts/compute-sanitizer-check.sh
  limit=$saved_limit
fi


# Several GPUs: the NCCL all-reduce next to a GEMM loop (greenctx bench --comm --quick;
# GPU_CHECK_COMM_FULL=1: the whole sweep). Only where nvidia-smi lists 2 GPUs or more (on one GPU
# the pipeline is checked by cli_gpu.bench-comm-one-gpu-pipeline; the Python example runs in the
# python step). NVLink multicast off unless NCCL_NVLS_ENABLE is set.
ngpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if ! want comm; then
  :
elif [ "$ngpus" -ge 2 ]; then
  res="$out/results"
  mkdir -p "$res"
  saved_limit=$limit limit=${GPU_CHECK_COMM_TIMEOUT:-900}
  sweep=(--quick) name=bench-comm-quick
  [ -n "${GPU_CHECK_COMM_FULL:-}" ] && sweep=() name=bench-comm
  step comm-bench env NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}" "$cli" bench --comm "${sweep[@]}" \
    --json "$res/$name.json" --csv "$res/$name.csv" --svg "$res/$name.svg" \
    --markdown "$res/$name.md"
  limit=$saved_limit
else
  { echo; echo "=== comm: skipped: 1 GPU (nvidia-smi -L lists $ngpus)"; } | tee -a "$log"
fi

# The device tool returns at most 8 files: everything but the log and the bench archive goes
# into one archive.
# (tar exits 1 when a file changed while it read it, which the log does: still a good archive)
tar -czf "$out/outputs.tar.gz" -C "$out" --exclude=outputs.tar.gz --exclude=gpu-check.log \
  --exclude=results.tar.gz . 2>/dev/null
if [ $? -le 1 ]; then
  find "$out" -mindepth 1 -maxdepth 1 ! -name outputs.tar.gz ! -name gpu-check.log \
    ! -name results.tar.gz -exec rm -rf {} +
fi

echo | tee -a "$log"
if [ ${#failed[@]} -eq 0 ]; then
  echo "GPU CHECK PASSED" | tee -a "$log"
else
  echo "GPU CHECK FAILED: ${failed[*]}" | tee -a "$log"
  exit 1
fi
