#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The Python module's GPU check, for the GPU machine (no network): builds and installs the module
# into a virtual environment that sees the machine's own torch, nanobind, scikit-build-core and
# pytest, runs every Python test (CPU, GPU and torch tiers) and the PyTorch latency example.
# Run from anywhere; it works in the repository root. Writes under $OUT (default ./gpu-check-out):
#
#   gpu-check-python.log   what each step ran and its exit status
#   python-build.log       the build's full output
#   pytest.xml, pytest.log pytest -rs python/tests (JUnit XML, and the console output)
#   torch_latency.json/.txt examples/torch_latency.py --json, and its console output
#   dynamic_partition.json/.svg/.txt examples/dynamic_partition.py --quick, its chart and output
#   comm_overlap[_one_gpu].json/.txt examples/comm_overlap.py (its one-GPU test mode on one GPU)
#   tune-torch-RUN.json, tune_torch.txt, tune-torch-summary.txt  examples/tune_torch.py, both
#                          searches twice, and scripts/tune-summary.py over the two runs
#   decode_prefill_quick.json/.txt  examples/decode_prefill.py --quick (needs transformers)
#
# Exits non-zero when a step failed. Each step has a time limit (GPU_CHECK_STEP_TIMEOUT seconds
# overrides them all).
#
# The build: `pip install --no-build-isolation --no-deps --no-index .` (scikit-build-core and
# nanobind from the machine). Where scikit-build-core is missing, or that install fails, it falls
# back to CMake alone: the package target with GREENCTX_BUILD_PYTHON=ON and the tools, tests,
# benchmarks and examples off (so CLI11, nlohmann-json, GoogleTest and Google Benchmark are not
# needed), laid out as the wheel's (with its metadata) in the build folder and put on PYTHONPATH;
# the carried build's greenctx command and preload library (GREENCTX_BUILD, default build-gpu)
# go into its bin/ and lib/, as the wheel has them.
# GREENCTX_PY_BUILD=cmake skips the pip build and uses that directly.
#
# The environment: a venv with --system-site-packages (GREENCTX_PYENV, default
# build-python/venv-gpu). When python3 is itself a venv (on the GPU image it is
# /opt/torch/.venv), --system-site-packages would show the base interpreter's packages, not
# that venv's torch; a .pth file then adds python3's own site-packages to the new venv.
# shellcheck disable=SC2317  # the build functions run through `timeout bash -c NAME`
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
export PYTHONUNBUFFERED=1
. scripts/lib/timed-steps.sh
check_output gpu-check-out gpu-check-python.log
finish() { finish_checks "PYTHON GPU CHECK"; }
nvcc_on_path
base_py="${PYTHON:-python3}"
venv="${GREENCTX_PYENV:-build-python/venv-gpu}"

{
  echo "greenctx Python GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "commit: $(git describe --always --dirty 2>/dev/null || echo unknown)"
  echo "python: $(command -v "$base_py") ($("$base_py" --version 2>&1))"
  echo "nvcc: $(command -v nvcc || echo 'not found')"
  nvidia-smi --format=csv \
    --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu 2>&1 ||
    true
  echo "CUDA_DEVICE_MAX_CONNECTIONS=${CUDA_DEVICE_MAX_CONNECTIONS:-unset}"
} 2>&1 | tee -a "$log"

. scripts/lib/venv-with-torch.sh
make_venv() {
  venv_with_torch "$base_py" "$venv" || return 1
  "$venv/bin/python" - <<'EOF'
import importlib
for name in ("torch", "nanobind", "scikit_build_core", "pytest"):
    try:
        m = importlib.import_module(name)
        print(f"{name} {getattr(m, '__version__', '?')} ({m.__file__})")
    except ImportError as e:
        print(f"{name}: missing ({e})")
try:
    import torch
    print(f"torch.cuda.is_available() = {torch.cuda.is_available()}, CUDA {torch.version.cuda}, "
          f"{torch.cuda.device_count()} device(s)")
except ImportError:
    pass  # the torch tests then skip, saying so, and the example fails: both are reported
import pytest  # noqa: F401  (without pytest nothing can be tested: this step fails)
EOF
}
build_pip() {
  "$py" -c 'import scikit_build_core, nanobind' || {
    echo "scikit-build-core or nanobind missing: no pip build"; return 1; }
  "$py" -m pip install --no-build-isolation --no-deps --no-index --force-reinstall -v . \
    >"$out/python-build.log" 2>&1
  local rc=$?
  tail -n 15 "$out/python-build.log"
  return "$rc"
}
build_cmake() {
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  {
    cmake -S . -B "$cmake_dir" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGREENCTX_BUILD_PYTHON=ON \
      -DGREENCTX_BUILD_TOOLS=OFF -DGREENCTX_BUILD_TESTS=OFF -DGREENCTX_BUILD_BENCHMARKS=OFF \
      -DGREENCTX_BUILD_EXAMPLES=OFF -DGREENCTX_INSTALL=OFF -DPython_EXECUTABLE="$py" &&
      cmake --build "$cmake_dir" --target greenctx_python_package -j "$(nproc)"
  } >>"$out/python-build.log" 2>&1
  local rc=$?
  tail -n 15 "$out/python-build.log"
  [ "$rc" -eq 0 ] || return "$rc"
  local tools="${GREENCTX_BUILD:-build-gpu}/tools/greenctx"
  local package="$cmake_dir/python/package/greenctx"
  if [ -x "$tools/greenctx" ]; then
    mkdir -p "$package/bin" "$package/lib" && cp "$tools/greenctx" "$package/bin/" &&
      cp "$tools/libgreenctx_preload.so" "$package/lib/"
  else
    echo "no $tools/greenctx: the package has no greenctx command (its tests fail)"
  fi
}
py="$venv/bin/python"
cmake_dir="build-python/cmake-$(uname -m)"
export out venv base_py py cmake_dir
export -f make_venv venv_with_torch build_pip build_cmake

step venv 120 bash -c make_venv || finish
# The module must come from this build, not from an older install.
"$py" -m pip uninstall -y -q greenctx >/dev/null 2>&1 || true
if [ "${GREENCTX_PY_BUILD:-pip}" = cmake ]; then
  echo "GREENCTX_PY_BUILD=cmake: the plain CMake build only" | tee -a "$log"
  step build-cmake 240 bash -c build_cmake || finish
  export PYTHONPATH="$PWD/$cmake_dir/python/package${PYTHONPATH:+:$PYTHONPATH}"
elif ! step build-pip 240 bash -c build_pip; then
  unset 'failed[-1]' # not a failure of its own: the fallback decides
  echo "pip build failed or impossible: falling back to a plain CMake build" | tee -a "$log"
  step build-cmake 240 bash -c build_cmake || finish
  export PYTHONPATH="$PWD/$cmake_dir/python/package${PYTHONPATH:+:$PYTHONPATH}"
fi
step import 60 "$py" -c 'import greenctx, greenctx._greenctx as m
print("greenctx", greenctx.__version__, "from", m.__file__)
print("toolkit", greenctx.format_cuda_version(greenctx.toolkit_version()))' || finish

step pytest 180 bash -o pipefail -c \
  "'$py' -m pytest -rs -v -p no:cacheprovider python/tests --junitxml='$out/pytest.xml' 2>&1 |
   tee '$out/pytest.log'"
step torch-latency 150 bash -o pipefail -c \
  "'$py' examples/torch_latency.py --json '$out/torch_latency.json' 2>&1 |
   tee '$out/torch_latency.txt'"
# The installed `greenctx` command (the wheel's console script, pip builds only) confining a
# PyTorch program: the same numbers as its plain run, from the installed package's preload library.
if [ -x "$venv/bin/greenctx" ]; then
  step installed-run-plain 120 bash -o pipefail -c \
    "'$py' tests/gpu/torch_matmul.py 4096 3 | tee '$out/installed-run-plain.txt'"
  step installed-run-16 120 bash -o pipefail -c \
    "PATH='$venv/bin':\$PATH greenctx run --sms 16 -- '$py' tests/gpu/torch_matmul.py 4096 3 |
     tee '$out/installed-run-16.txt'"
  step installed-run-compare 30 python3 scripts/compare-runs.py "$out/installed-run-plain.txt" \
    "$out/installed-run-16.txt"
else
  echo "installed greenctx command: not checked (no $venv/bin/greenctx: the CMake fallback build)" |
    tee -a "$log"
fi
# A greenctx.Pool moving SMs between a GEMM stream and a critical stream (a few seconds).
step dynamic-partition 120 bash -o pipefail -c \
  "'$py' examples/dynamic_partition.py --quick --json '$out/dynamic_partition.json' \
   --svg '$out/dynamic_partition.svg' 2>&1 | tee '$out/dynamic_partition.txt'"
# greenctx.tune over a PyTorch pair (a decode-like matmul critical, a prefill-like matmul loop as
# background): both searches, twice, and tune-summary.py's verdicts. Exit 1 of
# the example (no split met the objective) is a result, said in its output, not a failure.
step tune-torch 300 bash -o pipefail -c \
  "'$py' examples/tune_torch.py --search both --runs 2 --quiet --json '$out/tune-torch-{run}.json' \
   2>&1 | tee '$out/tune_torch.txt'; rc=\${PIPESTATUS[0]}; [ \$rc -le 1 ] || exit \$rc
   python3 scripts/tune-summary.py '$out'/tune-torch-*.json | tee '$out/tune-torch-summary.txt'"
# A transformers decode step beside its prefill: tune, the placements and the narrow policy
# on a 4-layer model. Where transformers is missing the example exits 3 and says so.
step decode-prefill-quick 300 bash -o pipefail -c \
  "'$py' examples/decode_prefill.py --quick --json '$out/decode_prefill_quick.json' 2>&1 |
   tee '$out/decode_prefill_quick.txt'"
# The all-reduce next to a GEMM loop, one process per GPU. On a 1-GPU machine it runs in
# its test mode (GREENCTX_COMM_ONE_GPU_TEST=1: one rank, numbers that answer nothing) so that the
# program itself is still exercised. NVLink multicast off unless NCCL_NVLS_ENABLE is set.
if [ "$(nvidia-smi -L 2>/dev/null | wc -l)" -ge 2 ]; then
  step comm-overlap 300 env NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}" bash -o pipefail -c \
    "'$py' examples/comm_overlap.py --json '$out/comm_overlap.json' 2>&1 |
     tee '$out/comm_overlap.txt'"
else
  step comm-overlap-one-gpu 120 env NCCL_NVLS_ENABLE="${NCCL_NVLS_ENABLE:-0}" \
    GREENCTX_COMM_ONE_GPU_TEST=1 bash -o pipefail -c \
    "'$py' examples/comm_overlap.py --sizes-mib 1,256 --samples 10 \
     --json '$out/comm_overlap_one_gpu.json' 2>&1 | tee '$out/comm_overlap_one_gpu.txt'"
fi
finish
