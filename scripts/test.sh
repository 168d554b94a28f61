#!/usr/bin/env bash
# Sets up, builds and runs every test. Without a GPU the GPU tier is reported as skipped, each test
# with its reason (ctest -V shows it; the reason is also printed once below); it never passes
# silently.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
status=0
(cd build && ctest --output-on-failure --timeout 600 "$@") || status=$?

# The Python module: built with pip into a virtual environment of its own (build/pyenv), then its
# tests (the GPU ones skip, each with its reason, without a GPU).
if [ ! -x build/pyenv/bin/python ]; then
  python3 -m venv build/pyenv
fi
# Pinned: the committed type stub is checked against what this nanobind generates.
build/pyenv/bin/python -m pip install -q --disable-pip-version-check pytest scikit-build-core==1.1.2 \
  nanobind==3.1.0
build/pyenv/bin/python -m pip install -q --disable-pip-version-check --no-build-isolation .
build/pyenv/bin/python -m pytest -rs python/tests || status=$?

if ! build/tools/greenctx/greenctx info >/dev/null 2>/tmp/greenctx-info.$$; then
  echo "GPU tier skipped on this machine: $(cat /tmp/greenctx-info.$$)"
fi
rm -f /tmp/greenctx-info.$$
exit $status
