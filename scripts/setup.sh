#!/usr/bin/env bash
# Installs what greenctx needs to build (Debian/Ubuntu packages) and builds it into build/.
# Idempotent: packages already present are not touched; the build is incremental.
# Needs the CUDA toolkit (nvcc and headers, 12.4 or newer) in /usr/local/cuda or on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ pkg-config libcli11-dev libfmt-dev nlohmann-json3-dev libgtest-dev
          libbenchmark-dev)
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

if ! command -v nvcc >/dev/null 2>&1; then
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
    [ -x "$d/nvcc" ] && export PATH="$d:$PATH" && break
  done
fi
command -v nvcc >/dev/null 2>&1 || {
  echo "setup: the CUDA toolkit (nvcc, 12.4 or newer) is needed to build greenctx's kernels;" >&2
  echo "       install it or put its bin/ on PATH" >&2
  exit 1
}

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_COMPILER="$(command -v nvcc)" >/dev/null
cmake --build build -j "$(nproc)"
