#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The tree holds the product: no tracked file over 1 MB outside tests/data/ (raw results and logs
# live in the history; benchmarks/RESULTS.md names the commit), and no source file under benchmarks/results/
# (it holds summaries of runs; programs belong beside the code they measure); every script under
# scripts/ that starts with #! is executable (the docs run them as scripts/NAME).
# Usage: check_tree.sh SOURCE_DIR. Exits 1 naming each offending file.
set -uo pipefail
root=${1:?usage: check_tree.sh SOURCE_DIR}
cd "$root" || exit 1
in_git=0
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  in_git=1
  mapfile -t files < <(git ls-files)
else
  mapfile -t files < <(find . -type f -not -path './build*' -not -path './.git/*' | sed 's|^\./||' | sort)
fi
limit=$((1024 * 1024))
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  size=$(stat -c %s "$f")
  if [ "$size" -gt "$limit" ] && [[ $f != tests/data/* ]]; then
    echo "check_tree: $f is $size bytes, over 1 MB: keep its summary in the tree, the file in the history"
    bad=1
  fi
  case $f in
    benchmarks/results/*.c | benchmarks/results/*.h | benchmarks/results/*.cpp | benchmarks/results/*.hpp | \
    benchmarks/results/*.cu | benchmarks/results/*.cuh | benchmarks/results/*.py | benchmarks/results/*.sh)
      echo "check_tree: $f is a source file under benchmarks/results/: move it beside the code it measures"
      bad=1 ;;
  esac
  if [[ $f == scripts/* ]] && [ "$(head -c 2 "$f")" = '#!' ]; then
    if [ $in_git = 1 ]; then
      mode=$(git ls-files -s -- "$f" | cut -d' ' -f1)
    else
      mode=$([ -x "$f" ] && echo 100755 || echo 100644)
    fi
    if [ "$mode" != 100755 ]; then
      echo "check_tree: $f starts with #! but is not executable: git update-index --chmod=+x $f"
      bad=1
    fi
  fi
done
echo "check_tree: ${#files[@]} files, $([ $bad = 0 ] && echo "none" || echo "some") out of place"
exit $bad
