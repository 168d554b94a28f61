#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Sets up, builds and runs the main job: `greenctx demo` on the first GPU. Where there is no GPU,
# greenctx says so and exits 3.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
exec "${GREENCTX_BUILD_DIR:-build}"/tools/greenctx/greenctx demo "$@"
