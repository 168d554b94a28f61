#!/usr/bin/env bash
# Sets up, builds and runs every test. Without a GPU the GPU tier is reported as skipped, each test
# with its reason; it never passes silently.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cd build
ctest --output-on-failure --timeout 600 "$@"
