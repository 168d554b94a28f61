#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Every public C++ header compiles on its own, included first in an empty file: each says what it
# needs, so that a user includes the one concept they use (and greenctx/greenctx.hpp for all).
# Usage: check_headers.sh SOURCE_DIR CXX INCLUDE_DIR... (the CUDA headers' folders). Exits 1
# naming each header that does not compile alone, with the compiler's first lines.
set -uo pipefail
root=${1:?usage: check_headers.sh SOURCE_DIR CXX INCLUDE_DIR...}
cxx=${2:?usage: check_headers.sh SOURCE_DIR CXX INCLUDE_DIR...}
shift 2
flags=(-std=c++20 -fsyntax-only -I"$root/include")
for dir in "$@"; do
  flags+=(-I"$dir")
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
checked=0
failed=0
for header in "$root"/include/greenctx/*.hpp "$root"/include/greenctx/*/*.hpp; do
  name=${header#"$root"/include/}
  printf '#include "%s"\n' "$name" > "$work/alone.cpp"
  checked=$((checked + 1))
  if ! "$cxx" "${flags[@]}" "$work/alone.cpp" > "$work/out.txt" 2>&1; then
    failed=$((failed + 1))
    echo "$name does not compile on its own:"
    head -5 "$work/out.txt" | sed 's/^/  /'
  fi
done
echo "check_headers: $checked headers, $failed not self-contained"
if [ "$checked" -lt 20 ]; then
  echo "check_headers: only $checked headers under $root/include: wrong source folder?"
  exit 1
fi
[ "$failed" -eq 0 ]
