#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs a CUDA toolkit that nvcc and CMake can use from NVIDIA's PyPI wheels, into DIR:
#
#   scripts/cuda-toolkit-pypi.sh DIR [--version V] [--runtime-version V]
#                                    [--cublas [--cublas-version V] [--cccl-version V]]
#
# DIR becomes a toolkit root (DIR/bin/nvcc, DIR/include, DIR/lib, DIR/nvvm): use it with `cmake
# -DCUDAToolkit_ROOT=DIR -DCMAKE_CUDA_COMPILER=DIR/bin/nvcc`. The wheels are the compiler pieces at
# version V (nvidia-cuda-nvcc, -runtime, -crt, nvidia-nvvm: nvcc, cudart shared and static, the
# runtime and driver API headers with cuda.h and cudaTypedefs.h; default 13.5.37, the toolkit of
# issue item 6; --runtime-version sets nvidia-cuda-runtime's apart) and, with --cublas,
# nvidia-cublas (default 13.10.0.20) and nvidia-cuda-cccl (default 13.3.5.0.6, the newest: the
# cuBLAS programs compile with it and 13.5.37), whose include/nv/target cuBLAS's headers need
# through cuda_fp16.h (without it the compiler took /usr/local/include's here). The CUDA 13.0 of
# this project's machines (the dist-info in their /usr/local/cuda) is 13.0.88 with runtime 13.0.96,
# cuBLAS 13.1.0.3 (whose cublas_api.h needs 13.0.96's library_types.h) and CCCL 13.0.85. Every wheel
# lays its files under nvidia/cu13/, so unpacking them all into one folder gives nvcc the layout its
# nvcc.profile expects (bin/../nvvm/bin/cicc, bin/../include). What the wheels lack is added: the
# unversioned libcudart.so and libcublas*.so links that a linker looks for (the wheels ship only the
# .so.13 files). PyPI has no libcuda stub: a build with this toolkit has no CUDA::cuda_driver unless
# the machine's driver provides libcuda.
#
# Idempotent: a wheel already unpacked (DIR/.installed/NAME-VERSION) is not fetched again; a DIR
# holding another version of a wheel is refused (one version per folder).
# Needs python3 with pip (GREENCTX_PYTHON names another Python, e.g. a virtual environment's) and
# network access to PyPI; on failure it says which wheel and exits 1.
set -euo pipefail

usage() {
  echo "usage: $0 DIR [--version V] [--runtime-version V]" \
       "[--cublas [--cublas-version V] [--cccl-version V]]" >&2
  exit 2
}
[ $# -ge 1 ] || usage
dir=$1
shift
cuda_version=13.5.37
cublas_version=13.10.0.20
cccl_version=13.3.5.0.6
runtime_version=""
with_cublas=0
while [ $# -gt 0 ]; do
  case $1 in
    --cublas) with_cublas=1 ;;
    --version) [ $# -ge 2 ] || usage; cuda_version=$2; shift ;;
    --runtime-version) [ $# -ge 2 ] || usage; runtime_version=$2; shift ;;
    --cublas-version) [ $# -ge 2 ] || usage; cublas_version=$2; shift ;;
    --cccl-version) [ $# -ge 2 ] || usage; cccl_version=$2; shift ;;
    *) usage ;;
  esac
  shift
done

wheels=("nvidia-cuda-nvcc==$cuda_version" "nvidia-cuda-runtime==${runtime_version:-$cuda_version}"
        "nvidia-cuda-crt==$cuda_version" "nvidia-nvvm==$cuda_version")
[ "$with_cublas" = 1 ] && wheels+=("nvidia-cublas==$cublas_version"
                                   "nvidia-cuda-cccl==$cccl_version")

mkdir -p "$dir/.installed" "$dir/.wheels"
dir=$(cd "$dir" && pwd)
arch=$(uname -m)
platforms=()
for p in manylinux2014 manylinux_2_17 manylinux_2_27 manylinux_2_28 manylinux2010 manylinux_2_12 \
         manylinux1 manylinux_2_5; do
  platforms+=(--platform "${p}_$arch")
done

python=${GREENCTX_PYTHON:-python3}
if ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "cuda-toolkit-pypi: $python has no pip (Debian/Ubuntu: apt-get install python3-pip)" >&2
  exit 1
fi

for spec in "${wheels[@]}"; do
  name=${spec%%==*}
  version=${spec##*==}
  stamp="$dir/.installed/$name-$version"
  [ -e "$stamp" ] && continue
  for other in "$dir/.installed/$name"-[0-9]*; do
    if [ -e "$other" ]; then
      echo "cuda-toolkit-pypi: $dir holds $(basename "$other"), not $version:" \
           "use another folder" >&2
      exit 1
    fi
  done
  echo "cuda-toolkit-pypi: fetching $spec from PyPI into $dir" >&2
  rm -rf "$dir/.wheels/$name"
  if ! "$python" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
        "${platforms[@]}" -d "$dir/.wheels/$name" "$spec" >&2; then
    echo "cuda-toolkit-pypi: could not download $spec from PyPI (network? version?)" >&2
    exit 1
  fi
  # Unpack nvidia/cu13/* into DIR, keeping the files' modes (zipfile's extract drops them, and
  # nvcc, cicc, ptxas must be executable).
  "$python" - "$dir" "$dir/.wheels/$name"/*.whl <<'EOF'
import os, sys, zipfile
root, wheel = sys.argv[1], sys.argv[2]
prefix = "nvidia/cu13/"
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if not info.filename.startswith(prefix) or info.is_dir():
            continue
        target = os.path.join(root, info.filename[len(prefix):])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = target + ".part"
        with z.open(info) as src, open(tmp, "wb") as dst:
            while chunk := src.read(1 << 20):
                dst.write(chunk)
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(tmp, mode or 0o644)
        os.replace(tmp, target)
EOF
  rm -rf "$dir/.wheels/$name" # the unpacked files are what is kept (cuBLAS's wheel is 440 MB)
  touch "$stamp"
done

# The links a linker looks for, beside the versioned libraries the wheels ship.
for lib in "$dir"/lib/lib*.so.[0-9]*; do
  [ -e "$lib" ] || continue
  base=$(basename "$lib")
  link="$dir/lib/${base%%.so.*}.so"
  [ -e "$link" ] || ln -s "$base" "$link"
done
# Some tools look in lib64 (CMake's FindCUDAToolkit finds either).
[ -e "$dir/lib64" ] || ln -s lib "$dir/lib64"

"$dir/bin/nvcc" --version | tail -n 2 >&2
