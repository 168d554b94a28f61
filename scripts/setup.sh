#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what greenctx needs to build (Debian/Ubuntu packages) and builds it into build/.
# Idempotent: packages already present are not touched; the build is incremental.
#
# The CUDA toolkit: nvcc 12.4 or newer in /usr/local/cuda or on PATH. Without one (a machine with
# only the driver), the toolkit's pieces come from PyPI into BUILD/cuda-pypi-VERSION
# (scripts/cuda-toolkit-pypi.sh: nvcc, cudart, headers and cuBLAS) and are used. The versions are
# in scripts/lib/cuda-pypi-versions.sh (13.0.88 with runtime 13.0.96, cuBLAS 13.1.0.3 and CCCL
# 13.0.85: the CUDA 13.0 of this project's machines, the toolkit of the H200's driver 580).
# GREENCTX_PYPI_CUDA_VERSION, GREENCTX_PYPI_RUNTIME_VERSION, GREENCTX_PYPI_CUBLAS_VERSION and
# GREENCTX_PYPI_CCCL_VERSION change them (greenctx builds and passes its GPU tier with 13.5.37
# too: docs/toolkits.md). PyPI has no libcuda stub: the two test programs that
# link libcuda then use the driver's, and are not built on a machine without a driver
# (tests/CMakeLists.txt).
#
#   GREENCTX_BUILD_DIR=DIR          build there instead of build/
#   GREENCTX_IGNORE_SYSTEM_CUDA=1   use the PyPI toolkit even where a toolkit is installed, and hide
#                                   the installed one from CMake (what a machine without one sees,
#                                   as far as CMake's searches go); use a fresh DIR for it
#   GREENCTX_JOBS=N                 build with N jobs (default: one per core)
#   scripts/setup.sh ARGS...        ARGS go to CMake's configure step (-DNAME=VALUE)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GREENCTX_BUILD_DIR:-build}

nvcc=""
if [ "${GREENCTX_IGNORE_SYSTEM_CUDA:-0}" != 1 ]; then
  nvcc=$(command -v nvcc || true)
  if [ -z "$nvcc" ]; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
      [ -x "$d/nvcc" ] && nvcc="$d/nvcc" && break
    done
  fi
fi

packages=(cmake ninja-build g++ pkg-config libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev
          libbenchmark-dev clang-14 libclang-rt-14-dev # clang, ASan and libFuzzer: scripts/sanitize.sh
          clang-format-14 # the format check, ctest cpu.format.clang_format
          help2man) # the man page of the greenctx command
# The PyPI toolkit is fetched with pip.
[ -z "$nvcc" ] && ! python3 -m pip --version >/dev/null 2>&1 && packages+=(python3-pip)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

cuda_args=()
if [ -n "$nvcc" ]; then
  cuda_args=(-DCMAKE_CUDA_COMPILER="$nvcc")
else
  if [ "${GREENCTX_IGNORE_SYSTEM_CUDA:-0}" = 1 ]; then
    echo "setup: GREENCTX_IGNORE_SYSTEM_CUDA=1: the CUDA toolkit comes from PyPI"
  else
    echo "setup: no CUDA toolkit (nvcc) found: its pieces come from PyPI"
  fi
  . scripts/lib/cuda-pypi-versions.sh
  version=${GREENCTX_PYPI_CUDA_VERSION:-$GREENCTX_PYPI_CUDA_DEFAULT}
  root="$build/cuda-pypi-$version"
  scripts/cuda-toolkit-pypi.sh "$root" --version "$version" \
      --runtime-version "${GREENCTX_PYPI_RUNTIME_VERSION:-$GREENCTX_PYPI_RUNTIME_DEFAULT}" --cublas \
      --cublas-version "${GREENCTX_PYPI_CUBLAS_VERSION:-$GREENCTX_PYPI_CUBLAS_DEFAULT}" \
      --cccl-version "${GREENCTX_PYPI_CCCL_VERSION:-$GREENCTX_PYPI_CCCL_DEFAULT}" || {
    echo "setup: could not install the CUDA toolkit from PyPI (above: why); install the toolkit" >&2
    echo "       (nvcc 12.4 or newer) or put its bin/ on PATH" >&2
    exit 1
  }
  root=$(cd "$root" && pwd)
  cuda_args=(-DCUDAToolkit_ROOT="$root" -DCMAKE_CUDA_COMPILER="$root/bin/nvcc")
  if [ "${GREENCTX_IGNORE_SYSTEM_CUDA:-0}" = 1 ]; then
    . scripts/lib/hide-system-cuda.sh
    hide_system_cuda
    join() { local IFS=';'; echo "$*"; }
    cuda_args+=(-DCMAKE_IGNORE_PREFIX_PATH="$(join "${ignore_prefixes[@]}")"
                -DCMAKE_IGNORE_PATH="$(join "${ignore_paths[@]}")")
  fi
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${cuda_args[@]}" "$@" >/dev/null
cmake --build "$build" -j "${GREENCTX_JOBS:-$(nproc)}"
