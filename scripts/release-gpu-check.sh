#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The release checked on a GPU machine as a user installs it: the wheel built there from the
# sdist (scripts/release.sh makes it) with that machine's Python, offline (--no-build-isolation:
# scikit-build-core and nanobind from the machine; CLI11, fmt and nlohmann-json found through
# CMAKE_PREFIX_PATH where the system has none), repaired by auditwheel where it is installed,
# then installed into a fresh virtual environment that sees the machine's torch, where
#   greenctx --version, greenctx info, greenctx run --sms 16 with a PyTorch matmul (its output
#   the same as the plain run's) and import greenctx (a split of 16 SMs and the rest)
# must work. Writes under OUT (default ./release-gpu-check-out): release-gpu-check.log, the
# wheel, wheel.log, auditwheel-show.txt. Exit 0 when every check passed.
#
#   scripts/release-gpu-check.sh SDIST
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
sdist=${1:?usage: scripts/release-gpu-check.sh SDIST}
sdist=$(realpath "$sdist")
base_py=${PYTHON:-python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
. scripts/lib/timed-steps.sh
check_output release-gpu-check-out release-gpu-check.log
. scripts/lib/venv-with-torch.sh
nvcc_on_path
{
  echo "greenctx release GPU check, $(date -u +%Y-%m-%dT%H:%M:%SZ), sdist $(basename "$sdist")"
  echo "python: $(command -v "$base_py") ($("$base_py" --version 2>&1))"
  nvidia-smi --format=csv,noheader --query-gpu=name,driver_version 2>&1 || true
} | tee -a "$log"

step wheel 600 "$base_py" -m pip wheel --no-build-isolation --no-deps --no-index -w "$work/raw" \
  "$sdist" > "$out/wheel.log" 2>&1
raw=$(ls "$work"/raw/greenctx-*.whl 2>/dev/null) || { echo "no wheel" | tee -a "$log"; exit 1; }
wheel=$raw
if "$base_py" -m auditwheel --version > /dev/null 2>&1; then
  step auditwheel-show 120 "$base_py" -m auditwheel show "$raw" | tee "$out/auditwheel-show.txt"
  step auditwheel-repair 300 "$base_py" -m auditwheel repair -w "$work/repaired" "$raw" &&
    wheel=$(ls "$work"/repaired/greenctx-*.whl)
else
  echo "auditwheel: not installed here, the wheel is not repaired" | tee -a "$log"
fi
cp "$wheel" "$out/"
echo "wheel: $(basename "$wheel")" | tee -a "$log"

venv=$work/venv
export -f venv_with_torch
step venv 120 bash -c 'venv_with_torch "$0" "$1"' "$base_py" "$venv"
step install 120 "$venv/bin/python" -m pip install --no-deps --no-index "$wheel"
cd "$work" || exit 1 # away from the source tree: the installed package
step version 30 "$venv/bin/greenctx" --version
step info 60 "$venv/bin/greenctx" info
matmul=$(cd "$OLDPWD" && realpath tests/gpu/torch_matmul.py)
step run-plain 120 bash -o pipefail -c "'$venv/bin/python' '$matmul' 4096 3 | tee '$out/matmul-plain.txt'"
step run-16 120 bash -o pipefail -c \
  "'$venv/bin/greenctx' run --sms 16 -- '$venv/bin/python' '$matmul' 4096 3 | tee '$out/matmul-16.txt'"
same_result() { # the plain and the confined run printed the same digest (and one at all)
  local plain confined
  plain=$(grep -o 'sha256 [0-9a-f]*' "$out/matmul-plain.txt")
  confined=$(grep -o 'sha256 [0-9a-f]*' "$out/matmul-16.txt")
  echo "plain: ${plain:-none}; on 16 SMs: ${confined:-none}"
  [ -n "$plain" ] && [ "$plain" = "$confined" ]
}
export out
export -f same_result
step run-16-same-result 10 bash -c same_result
step import 60 "$venv/bin/python" -c '
import greenctx
print("greenctx", greenctx.__version__, greenctx.__file__)
parts = greenctx.PartitionSet.create(greenctx.Device(0), "16,rest")
print("16,rest:", [parts[i].obtained for i in range(len(parts))])'
finish_checks "RELEASE GPU CHECK"
