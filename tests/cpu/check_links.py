#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks the links and paths of the project's markdown files (ctest cpu.docs.links).

Every relative link [text](PATH#ANCHOR) must name a file or folder of the tree and, for a markdown
file, a heading of it; every path in backticks that starts with a top folder of the tree
(`src/plan/`, `docs/cli.md`) must exist, unless its line says it is at an earlier commit ("at
commit"). Prints each broken one as FILE:LINE: what; exit 1 if any.

    check_links.py SOURCE_DIR
"""
import pathlib
import re
import sys

from tree_files import tree_files

TOP = ("include", "src", "tools", "python", "examples", "tests", "benchmarks", "docs", "cmake",
       "scripts", ".ci")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
CODE = re.compile(r"`([^`\s]+)`")


def anchor(heading):
    """The anchor a heading gets: lower case, punctuation gone, spaces as dashes."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    found = set()
    fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and line.startswith("#"):
            found.add(anchor(line.lstrip("#")))
    return found


def check(root, md, problems):
    fence = False
    for number, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fence = not fence
            continue
        where = f"{md.relative_to(root)}:{number}"
        for target in LINK.findall(line):
            if re.match(r"^[a-z]+:", target):
                continue  # https:, mailto:
            path, _, name = target.partition("#")
            dest = (md.parent / path).resolve() if path else md
            if not dest.exists():
                problems.append(f"{where}: link to {target}: no such file")
            elif name and dest.suffix == ".md" and name not in anchors(dest):
                problems.append(f"{where}: link to {target}: no heading '{name}' there")
        if fence or "at commit" in line:
            continue
        for code in CODE.findall(line):
            if not code.startswith(tuple(t + "/" for t in TOP)) or re.search(r"[*{}<>$]|\.\.\.", code):
                continue
            if code.startswith("include/") and not code.startswith("include/greenctx"):
                continue  # a toolkit's include/ folder
            path = code.split(":")[0].rstrip(",.;")
            if not (root / path).exists():
                problems.append(f"{where}: `{code}`: no such path in the tree")


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    files = tree_files(root, "*.md")
    problems = []
    for name in files:
        if not name.startswith("benchmarks/results/"):  # runs' summaries quote their own paths
            check(root, root / name, problems)
    for p in problems:
        print(p)
    print(f"check_links: {len(files)} markdown files, {len(problems)} broken links or paths")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
