#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Every source file of greenctx says its license (ctest cpu.license.spdx).

A source file (C, C++, CUDA, Python, shell, CMake, the linker map and the X-macro list) carries
"SPDX-License-Identifier: Apache-2.0" in a comment on one of its first three lines. Data the tests
read (tests/data, the fuzzers' corpus) and the generated type stub are not sources. Prints each
file that lacks the line; exit 1 if any. With --add, writes the line into those that lack it
(after a shebang), in the file's own comment syntax.

    check_license.py SOURCE_DIR [--add]
"""
import pathlib
import sys

from tree_files import tree_files

LINE = "SPDX-License-Identifier: Apache-2.0"
SLASHES = (".c", ".h", ".cpp", ".hpp", ".cu", ".cuh", ".def")
HASH = (".py", ".sh", ".cmake", ".in", ".toml")
BLOCK = (".map",)
HASH_NAMES = ("CMakeLists.txt", "checks.txt", "run", ".clang-format", ".gitignore")
NOT_SOURCE = ("tests/data/", "tests/sanitize/corpus/", "benchmarks/results/")
GENERATED = ("python/greenctx/_greenctx.pyi",)


def comment(path):
    """The license line in the file's comment syntax, or None when it is not a source file."""
    name = path.name
    if name in HASH_NAMES or name.endswith(HASH):
        return f"# {LINE}"
    if name.endswith(SLASHES):
        return f"// {LINE}"
    if name.endswith(BLOCK):
        return f"/* {LINE} */"
    return None


def sources(root):
    for name in tree_files(root):
        if name.startswith(NOT_SOURCE) or name in GENERATED:
            continue
        line = comment(pathlib.Path(name))
        if line:
            yield name, line


def add(path, line):
    text = path.read_text(encoding="utf-8")
    if text.startswith("#!"):
        first, _, rest = text.partition("\n")
        path.write_text(f"{first}\n{line}\n{rest}", encoding="utf-8")
    else:
        path.write_text(f"{line}\n{text}", encoding="utf-8")


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    fix = "--add" in sys.argv[2:]
    missing = []
    count = 0
    for name, line in sources(root):
        count += 1
        head = (root / name).read_text(encoding="utf-8").splitlines()[:3]
        if not any(LINE in h for h in head):
            missing.append(name)
            if fix:
                add(root / name, line)
    verb = "given the line" if fix else "without it"
    for name in missing:
        print(f"check_license: {name}: no '{LINE}' in its first three lines")
    print(f"check_license: {count} source files, {len(missing)} {verb}"
          + ("" if fix or not missing else " (tests/cpu/check_license.py SOURCE_DIR --add adds it)"))
    return 0 if fix or not missing else 1


if __name__ == "__main__":
    sys.exit(main())
