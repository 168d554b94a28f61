#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The library's layers, checked on its sources: each file includes only its own layer and the
layers below it (plan < driver < core; measure and compat each on core, neither on the other), public
headers or private ones.

src/CMakeLists.txt links each layer only to the one below, which catches a call upward at link
time; this catches an include upward, which the shared private include root (src/) would allow.
Usage: check_layers.py SOURCE_DIR. Exits 1 and names each offending line.
"""
import pathlib
import re
import sys

# Each layer and the layers it may include besides its own.
BELOW = {
    "plan": set(),
    "driver": {"plan"},
    "core": {"plan", "driver"},
    "measure": {"plan", "driver", "core"},
    "compat": {"plan", "driver", "core"},
}
LAYERS = list(BELOW)
UMBRELLA = "all"  # greenctx.hpp holds every layer: no layer may include it
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')


def layer_of_include(path):
    """The layer a greenctx include belongs to, or None for anything else."""
    parts = path.split("/")
    if parts[0] == "greenctx":
        if parts[1:] == ["cuda_compat.h"]:
            return "compat"
        if parts[1:] == ["greenctx.hpp"]:
            return UMBRELLA
        return parts[1] if len(parts) > 2 and parts[1] in LAYERS else None
    return parts[0] if len(parts) > 1 and parts[0] in LAYERS else None


def files_of(root, layer):
    for base in (root / "src" / layer, root / "include" / "greenctx" / layer):
        for f in sorted(base.rglob("*")):
            if f.suffix in (".hpp", ".h", ".cpp", ".cu", ".cuh"):
                yield f
    if layer == "compat":
        yield root / "include" / "greenctx" / "cuda_compat.h"


def main():
    root = pathlib.Path(sys.argv[1])
    problems, checked = [], 0
    for layer in LAYERS:
        for f in files_of(root, layer):
            checked += 1
            for number, line in enumerate(f.read_text().splitlines(), 1):
                m = INCLUDE.match(line)
                target = layer_of_include(m.group(1)) if m else None
                if target and target != layer and target not in BELOW[layer]:
                    where = "every layer" if target == UMBRELLA else f"the {target} layer"
                    problems.append(f"{f.relative_to(root)}:{number}: the {layer} layer includes "
                                    f"{m.group(1)} of {where}, which it does not sit on")
    if checked < 20:
        problems.append(f"only {checked} files found under {root}: wrong source folder?")
    for p in problems:
        print(p)
    print(f"{checked} files checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
