#!/usr/bin/env bash
# Sets up, builds and runs every test. Without a GPU the GPU tier is reported as skipped, each test
# with its reason (ctest -V shows it; the reason is also printed once below); it never passes
# silently.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
status=0
ctest --output-on-failure --timeout 600 "$@" || status=$?
if ! tools/greenctx/greenctx info >/dev/null 2>/tmp/greenctx-info.$$; then
  echo "GPU tier skipped on this machine: $(cat /tmp/greenctx-info.$$)"
fi
rm -f /tmp/greenctx-info.$$
exit $status
