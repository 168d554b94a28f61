#!/usr/bin/env bash
# Runs scripts/compare-command-records.py over what info, verify and split said before and after
# the report model (issue 23 item 8), and tune's first files against their record, printing every
# comparison and exiting 1 on any difference.
#
#   scripts/compare-command-records.sh saved NEW_CLI OUT
#       every info, verify and split file and tune's schema-1 files under bench/results/ against
#       NEW_CLI KIND --from FILE
#   scripts/compare-command-records.sh live OLD_CLI NEW_CLI OUT
#       the same commands run by the binary before (OLD_CLI) and after (NEW_CLI) on this machine's
#       GPU 0: the same exit code, and their JSON compared with --live (the probes' times left
#       out), or, where both refuse before any JSON, the same message
#
# Each mode also runs the script's --self-test over the same pairs: every number of the new JSON
# changed by one must be caught.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
compare=scripts/compare-command-records.py
status=0

check() { # check KIND [--live] OLD NEW ...: the comparison, then its self-test
  local kind=$1
  shift
  python3 "$compare" "$kind" "$@" || status=1
  python3 "$compare" --self-test "$kind" "$@" || status=1
}

case $mode in
  saved)
    cli=$2 out=$3
    mkdir -p "$out"
    for kind in info verify split tune; do
      case $kind in
        info) files=$(grep -rlE '"driver_library"' bench/results --include='*.json') ;;
        verify) files=$(grep -rlE '"partitions"' bench/results --include='*.json' |
                          xargs grep -l '"plan"') ;;
        split) files=$(grep -rl '"split_calls"' bench/results --include='*.json') ;;
        tune) files=$(grep -rl '"kind": "greenctx.tune"' bench/results --include='*.json') ;;
      esac
      # Records (schema 2), such as those the live mode saved, are what is compared against.
      files=$(echo "$files" | xargs grep -L '"schema": 2' || true)
      pairs=()
      for f in $files; do
        n="$out/$kind-$(echo "${f#bench/results/}" | tr '/' '_')"
        # A saved refusal (a split whose groups cannot all be made) is reported again with its
        # exit code; what it says is compared like any other.
        rc=0
        "$cli" "$kind" --from "$f" --json - > "$n" || rc=$?
        if [ $rc -ne 0 ]; then
          echo "$f: greenctx $kind --from exited $rc"
          [ -s "$n" ] || status=1
        fi
        pairs+=("$f" "$n")
      done
      check "$kind" "${pairs[@]}"
    done
    ;;
  live)
    old=$2 new=$3 out=$4
    mkdir -p "$out"
    run_both() { # run_both NAME KIND ARGS...: each binary's JSON and exit code, then compared
      local name=$1 kind=$2 before after
      shift 2
      before=0 after=0
      "$old" "$kind" "$@" --json - > "$out/$name-before.json" 2> "$out/$name-before.err" ||
        before=$?
      "$new" "$kind" "$@" --json - > "$out/$name-after.json" 2> "$out/$name-after.err" ||
        after=$?
      if [ $before -ne $after ]; then
        echo "$name: exit $before before, $after after"
        status=1
      elif [ ! -s "$out/$name-before.json" ] && [ ! -s "$out/$name-after.json" ]; then
        # Refused before any JSON (by both): the same refusal, word for word.
        if cmp -s "$out/$name-before.err" "$out/$name-after.err"; then
          echo "$name: same refusal, exit $after: $(head -c 160 "$out/$name-after.err")"
        else
          echo "$name: refused differently:"
          diff "$out/$name-before.err" "$out/$name-after.err"
          status=1
        fi
      else
        check "$kind" --live "$out/$name-before.json" "$out/$name-after.json"
      fi
    }
    run_both info info --device all
    run_both split-16 split 16
    run_both split-dry split '16:cosched=2 0:backfill' --dry-run
    run_both split-discover-8 split 0:cosched=8:pref=8
    run_both split-two-calls split '12:cosched=2 0:cosched=8:backfill'
    run_both split-refused split '64 72'
    run_both verify-16-rest verify 16,rest
    run_both verify-16-8-rest verify 16,8,rest
    run_both verify-ignore verify 10,rest --ignore-coscheduling
    ;;
  *)
    sed -n '2,12p' "$0" >&2
    exit 2
    ;;
esac
exit $status
