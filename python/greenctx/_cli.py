# SPDX-License-Identifier: Apache-2.0
"""The ``greenctx`` command of the installed package, and ``python -m greenctx``.

Both exec the ``greenctx`` program the wheel carries (``greenctx/bin/greenctx``, with the preload
library of ``greenctx run`` in ``greenctx/lib``): no Python process stays between the shell and the
program, so ``greenctx run`` keeps the program's pid, signals and exit status as in a source build.
"""

import os
import sys
from pathlib import Path
from typing import Optional


def program() -> Path:
    """The path of the bundled ``greenctx`` program."""
    return Path(__file__).resolve().parent / "bin" / "greenctx"


def nccl_library() -> Optional[str]:
    """The libnccl.so.2 of an installed NVIDIA wheel (nvidia-nccl-cu12 or -cu13, which torch
    installs), or None. The C++ library opens NCCL only from GREENCTX_NCCL_LIBRARY or the loader's
    path, so the package's command points it here."""
    try:
        import nvidia  # the namespace package NVIDIA's wheels share
    except ImportError:
        return None
    for folder in nvidia.__path__:
        for pattern in ("nccl/lib/libnccl.so.2", "cu*/lib/libnccl.so.2"):
            for found in sorted(Path(folder).glob(pattern)):
                return str(found)
    return None


def main() -> None:
    exe = program()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(
            f"greenctx: the greenctx program is missing from this installation ({exe}): "
            "reinstall the package (pip install --force-reinstall greenctx)\n"
        )
        sys.exit(4)
    if not os.environ.get("GREENCTX_NCCL_LIBRARY"):
        nccl = nccl_library()
        if nccl:
            os.environ["GREENCTX_NCCL_LIBRARY"] = nccl
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [str(exe), *sys.argv[1:]])
