#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every C, C++ and CUDA file of the project is as clang-format 14 writes it (.clang-format at the
# root). Pinned to 14, Debian's, which scripts/setup.sh installs: other versions format some
# constructs differently.
# Usage: check_format.sh SOURCE_DIR. Exits 1 naming each file and the command that fixes it.
set -uo pipefail
root=${1:?usage: check_format.sh SOURCE_DIR}
cd "$root" || exit 1
format=$(command -v clang-format-14 || true)
if [ -z "$format" ]; then
  echo "check_format: clang-format-14 is not installed (scripts/setup.sh installs it)"
  exit 1
fi
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.cpp' '*.hpp' '*.cu' '*.cuh')
else
  mapfile -t files < <(find include src tools tests python examples bench \
                         -type f \( -name '*.c' -o -name '*.h' -o -name '*.cpp' -o -name '*.hpp' \
                         -o -name '*.cu' -o -name '*.cuh' \) -print | sort)
fi
unclean=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  "$format" --dry-run -Werror "$f" >/dev/null 2>&1 || unclean+=("$f")
done
echo "check_format: ${#files[@]} files, ${#unclean[@]} not formatted"
if [ ${#unclean[@]} -gt 0 ]; then
  printf '  %s\n' "${unclean[@]}"
  echo "fix with: clang-format-14 -i ${unclean[*]}"
  exit 1
fi
[ ${#files[@]} -ge 100 ] || { echo "check_format: too few files found: wrong folder?"; exit 1; }
