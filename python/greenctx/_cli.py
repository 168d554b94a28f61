"""The ``greenctx`` command of the installed package, and ``python -m greenctx``.

Both exec the ``greenctx`` program the wheel carries (``greenctx/bin/greenctx``, with the preload
library of ``greenctx run`` in ``greenctx/lib``): no Python process stays between the shell and the
program, so ``greenctx run`` keeps the program's pid, signals and exit status as in a source build.
"""

import os
import sys
from pathlib import Path


def program() -> Path:
    """The path of the bundled ``greenctx`` program."""
    return Path(__file__).resolve().parent / "bin" / "greenctx"


def main() -> None:
    exe = program()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(
            f"greenctx: the greenctx program is missing from this installation ({exe}): "
            "reinstall the package (pip install --force-reinstall greenctx)\n"
        )
        sys.exit(4)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [str(exe), *sys.argv[1:]])
