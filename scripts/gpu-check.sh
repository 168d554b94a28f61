#!/usr/bin/env bash
# The whole GPU tier in one go, for the GPU machine: run from the repository root with a build/
# made beforehand (scripts/setup.sh) and carried along. Writes logs and JSON under $OUT (or
# ./gpu-check-out) and exits non-zero if any step failed. GREENCTX_BUILD names the build folder
# (default build/; scripts/stage-gpu.sh makes a small stripped one, build-gpu/, to carry).
#
#   scripts/gpu-check.sh            everything: tests, CLI checks, demo
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-$PWD/gpu-check-out}"
mkdir -p "$out"
log="$out/gpu-check.log"
bin="${GREENCTX_BUILD:-build}"
cli="$bin/tools/greenctx/greenctx"
failed=()

limit=${GPU_CHECK_STEP_TIMEOUT:-180} # seconds per step: a hang costs one step, not the lease
step() { # step NAME COMMAND...: runs it, appends to the log, remembers failures
  local name=$1; shift
  { echo; echo "=== $name: $*"; } | tee -a "$log"
  timeout "$limit" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc" | tee -a "$log"
  [ "$rc" -eq 0 ] || failed+=("$name (exit $rc)")
}
expect_rc() { # expect_rc CODE NAME COMMAND...: the command must exit with CODE
  local want=$1 name=$2; shift 2
  { echo; echo "=== $name (expects exit $want): $*"; } | tee -a "$log"
  timeout "$limit" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  echo "=== $name: exit $rc" | tee -a "$log"
  [ "$rc" -eq "$want" ] || failed+=("$name (exit $rc, expected $want)")
}

{
  echo "greenctx GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(cat "$bin/COMMIT" 2>/dev/null || git describe --always --dirty 2>/dev/null || echo unknown)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv
  echo "CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-unset}"
  ldd "$cli"
} 2>&1 | tee "$log"

step info "$cli" info
step info-json bash -o pipefail -c "$cli info --json > '$out/info.json' && cat '$out/info.json'"
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
step verify-16-rest "$cli" verify 16,rest
step verify-8-8-rest "$cli" verify 8,8,rest
step verify-16-8-rest-json bash -o pipefail -c "$cli verify 16,8,rest --json > '$out/verify-16-8-rest.json' && cat '$out/verify-16-8-rest.json'"
expect_rc 2 verify-too-many "$cli" verify 128,8
expect_rc 2 verify-unplaceable "$cli" verify 72,56
expect_rc 2 verify-bad-device "$cli" verify 16,rest --device 99
expect_rc 3 info-no-driver env GREENCTX_LIBCUDA=/nonexistent/libcuda.so.1 "$cli" info
# greenctx split: the group-parameter examples of spec section 3, real and dry run, and errors.
step split-16 "$cli" split 16
step split-16-backfill "$cli" split '16:cosched=2:pref=2 0:cosched=2:pref=2:backfill'
# Measured on 580: IgnoreSmCoscheduling pieces cannot run clusters of 4, so greenctx cannot prove
# what these groups promise and the check fails (exit 1); a 13.1 driver makes them natively.
expect_rc 1 split-28-32-clusters-of-4 "$cli" split '28:cosched=4:pref=4 32:cosched=4:pref=4'
step split-10-clusters-of-2 "$cli" split '10:cosched=2:pref=2'
step split-discover-8 bash -o pipefail -c "$cli split 0:cosched=8:pref=8 --json > '$out/split-discover-8.json' && cat '$out/split-discover-8.json'"
step split-8-then-4 "$cli" split '8:cosched=2:pref=2 0:cosched=4:pref=4'
# Two split calls: the second splits an intermediate context of IgnoreSmCoscheduling leftovers.
# (recorded, not judged: exit 1 means the check refused what greenctx could not prove)
step split-two-calls bash -c "$cli split '12:cosched=2 0:cosched=8:backfill'; echo \"split exit \$?\""

step split-dry-run "$cli" split '16 0:backfill' --dry-run
expect_rc 2 split-dry-run-empty-group "$cli" split '0 0' --dry-run
expect_rc 2 split-too-big "$cli" split '64 72'
expect_rc 2 split-odd "$cli" split 15
expect_rc 4 split-cosched-16 "$cli" split 32:cosched=16
# greenctx run: unmodified programs confined to N SMs (issue 5). run_target records %smid from
# several threads, the default streams, a created stream, a captured graph and the driver API.
tgt="$bin/tests/greenctx_run_target"
wl="$bin/tests/greenctx_run_workload"
step run-target-unconfined "$tgt" --expect-min-sms 100
step run-target-16 "$cli" run --sms 16 -- "$tgt" --expect-max-sms 16
step run-target-64 "$cli" run --sms 64 -- "$tgt" --expect-max-sms 64 --expect-min-sms 64
step run-per-thread-stream "$cli" run --sms 16 -- "$tgt" --threads 0 --per-thread-stream --expect-max-sms 16
expect_rc 7 run-exit-code "$cli" run --sms 16 -- sh -c 'exit 7'
expect_rc 143 run-signal "$cli" run --sms 16 -- sh -c 'kill -TERM $$'
# The runner is the program (exec): an ignored SIGHUP stays ignored (nohup), a signal arrives
# once, and the exit status comes back when whoever started greenctx ignores SIGCHLD.
step run-nohup bash -c "trap '' HUP; exec $cli run --sms 16 -- sh -c 'kill -HUP \$\$; echo survived SIGHUP'"
step run-signal-once bash -c "out=\$($cli run --sms 16 -- bash -c 'trap \"echo TERM\" TERM; kill -TERM \$\$; sleep 0.2'); echo \"\$out\"; [ \"\$out\" = TERM ]"
expect_rc 7 run-sigchld-ignored perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV' "$cli" run --sms 16 -- sh -c 'exit 7'
expect_rc 2 run-preload-directory env GREENCTX_PRELOAD=/tmp "$cli" run --sms 16 -- "$tgt"
expect_rc 2 run-bad-count "$cli" run --sms 12 -- "$tgt"
expect_rc 2 run-too-many "$cli" run --sms 200 -- "$tgt"
expect_rc 2 run-missing-program "$cli" run --sms 16 -- /nonexistent/program
# The CUDA guarantees under greenctx run (tests/run, docs/run-design.md): every program plain and
# confined with the same output, --strict, thread churn, the cost of confinement.
if [ -z "${GPU_CHECK_SKIP_SEMANTICS:-}" ]; then
  step_limit=$limit limit=${GPU_CHECK_SEMANTICS_TIMEOUT:-1200}
  step semantics env OUT="$out/semantics" GREENCTX_BUILD="$bin" scripts/semantics-check.sh
  limit=$step_limit
fi
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
expect_rc 2 scale-bad-count "$cli" scale --sms 12 -- "$wl" memory 64 1
expect_rc 1 scale-no-cuda "$cli" scale --sms 16 --repeat 1 -- sh -c 'exit 0'
step example-quickstart "$bin/examples/greenctx_quickstart"
step example-runtime-api "$bin/examples/greenctx_runtime_api"
step demo bash -o pipefail -c "$cli demo | tee '$out/demo.txt'"

if [ -n "${GPU_CHECK_SKIP_BENCH:-}" ]; then
  echo "benchmarks skipped (GPU_CHECK_SKIP_BENCH is set)" | tee -a "$log"
else
# Benchmarks: results (JSON with raw samples, CSV, SVG, markdown) go to $out/results and are
# packed into one archive at the end (the device tool returns at most 8 files).
res="$out/results"
mkdir -p "$res"
if [ -z "${GREENCTX_CUBLAS:-}" ]; then
  for p in /usr/local/cuda/lib64/libcublas.so.13 \
           "$(python3 -c 'import nvidia.cublas as m; print(list(m.__path__)[0])' 2>/dev/null)/lib/libcublas.so.13"; do
    [ -e "$p" ] && export GREENCTX_CUBLAS="$p" && break
  done
fi
echo "GREENCTX_CUBLAS=${GREENCTX_CUBLAS:-unset}" | tee -a "$log"
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
step overhead "$bin/bench/greenctx_overhead_bench" --benchmark_repetitions=10 \
  --benchmark_enable_random_interleaving=true \
  --benchmark_report_aggregates_only=true --benchmark_out="$res/overhead.json" \
  --benchmark_out_format=json
tar -czf "$out/results.tar.gz" -C "$out" results && rm -rf "$res"
fi

# The Python module, its torch tests and the PyTorch example (builds the module on this machine).
if [ -z "${GPU_CHECK_SKIP_PYTHON:-}" ] && [ -x scripts/gpu-check-python.sh ]; then
  step python env OUT="$out/python" GPU_CHECK_STEP_TIMEOUT="${GPU_CHECK_PYTHON_STEP_TIMEOUT:-240}" \
    scripts/gpu-check-python.sh
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
