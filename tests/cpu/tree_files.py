# SPDX-License-Identifier: Apache-2.0
"""The files of the source tree, for the CPU tier's checks of the tree itself."""
import pathlib
import subprocess


def tree_files(root: pathlib.Path, pattern: str = "*") -> list:
    """The files under `root` matching `pattern`, relative to it and sorted: the ones git tracks,
    or, in a source archive without git, every file outside the build folders and `.git`."""
    listed = subprocess.run(["git", "-C", str(root), "ls-files", pattern], capture_output=True,
                            text=True)
    if listed.returncode == 0:
        return sorted(listed.stdout.split())
    return sorted(str(f.relative_to(root)) for f in root.rglob(pattern) if f.is_file()
                  and not f.relative_to(root).parts[0].startswith(("build", ".git")))
