#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the CLI's GPU checks listed in tests/cli_gpu/checks.txt (the one list of them).
#
#   run-check.sh NAME...       runs these checks
#   run-check.sh --all         runs every check
#   run-check.sh --list        prints the names (tests/CMakeLists.txt registers one ctest each)
#   run-check.sh --ctest-file  prints a CTestTestfile.cmake for a copied build folder in the
#                              repository root such as build-gpu/ (scripts/stage-gpu.sh), so that
#                              `ctest --test-dir build-gpu -L gpu` works there
#
# GREENCTX_BUILD names the build folder (default build/), OUT the folder for outputs (default a
# new temporary one), GPU_CHECK_STEP_TIMEOUT the seconds a check may take (default 180).
# GREENCTX_REQUIRE_GPU=1 turns "no GPU" into a failure (scripts/gpu-check.sh, where a skip would
# hide that nothing ran).
# Exit: 0 when every check exited as listed, 1 when one did not, 77 when no GPU is there (ctest
# shows the check as skipped), 2 for an unknown name.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${GREENCTX_BUILD:-$here/../../build}"
build="$(cd "$build" 2>/dev/null && pwd || echo "$build")" # absolute: the checks run elsewhere
cd "$here/../.."
table="$here/checks.txt"

# Prints "NAME<TAB>CODE<TAB>COMMAND" for each check, blanks around the fields removed.
checks() {
  local name code cmd
  while IFS='|' read -r name code cmd; do
    [[ "$name" =~ ^[[:space:]]*(#|$) ]] && continue
    read -r name <<<"$name"
    read -r code <<<"$code"
    cmd="${cmd#"${cmd%%[![:space:]]*}"}"
    if [[ ! "$name" =~ ^[a-z0-9-]+$ || ! "$code" =~ ^[0-9]+$ || -z "$cmd" ]]; then
      echo "$table: malformed line for '$name' (want NAME | EXIT CODE | COMMAND)" >&2
      return 2
    fi
    printf '%s\t%s\t%s\n' "$name" "$code" "$cmd"
  done <"$table"
}

case "${1:-}" in
--list)
  checks | cut -f1
  exit "${PIPESTATUS[0]}"
  ;;
--ctest-file)
  echo "# Made by tests/cli_gpu/run-check.sh --ctest-file: the CLI's GPU checks, for this folder."
  checks | while IFS=$'\t' read -r name code cmd; do
    # ctest runs each in this folder: the paths are relative to it.
    echo "add_test(cli_gpu.$name bash ../tests/cli_gpu/run-check.sh $name)"
    echo "set_tests_properties(cli_gpu.$name PROPERTIES LABELS gpu SKIP_RETURN_CODE 77" \
         "TIMEOUT 300 RUN_SERIAL TRUE ENVIRONMENT GREENCTX_BUILD=.)"
  done
  exit 0
  ;;
"")
  echo "usage: $0 NAME... | --all | --list | --ctest-file" >&2
  exit 2
  ;;
esac

wanted=("$@")
if [ "$1" = --all ]; then
  mapfile -t wanted < <(checks | cut -f1)
else
  for want in "${wanted[@]}"; do
    if ! checks | cut -f1 | grep -qx -- "$want"; then
      echo "no check named '$want' in $table (see --list)" >&2
      exit 2
    fi
  done
fi

export BIN="$build"
export CLI="$BIN/tools/greenctx/greenctx" TGT="$BIN/tests/greenctx_run_target"
export WL="$BIN/tests/greenctx_run_workload"
export OUT="${OUT:-$(mktemp -d)}"
mkdir -p "$OUT"
if [ ! -x "$CLI" ]; then
  echo "no greenctx binary at $CLI: build first, or set GREENCTX_BUILD" >&2
  exit 1
fi
"$CLI" info >/dev/null 2>&1
if [ $? -eq 3 ]; then
  echo "skipped: no GPU here (greenctx info exits 3)"
  [ -n "${GREENCTX_REQUIRE_GPU:-}" ] && exit 1
  exit 77
fi

failed=()
for want in "${wanted[@]}"; do
  line="$(checks | awk -F'\t' -v n="$want" '$1 == n')"
  IFS=$'\t' read -r name code cmd <<<"$line"
  echo "=== $name (expects exit $code): $cmd"
  timeout "${GPU_CHECK_STEP_TIMEOUT:-180}" bash -o pipefail -c "$cmd" 2>&1
  rc=$?
  echo "=== $name: exit $rc"
  [ "$rc" -eq "$code" ] || failed+=("$name (exit $rc, expected $code)")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
