# SPDX-License-Identifier: Apache-2.0
"""CPU tier: the installed package carries the greenctx command and needs only the driver.

Run against the package pip installed (scripts/release.sh, scripts/wheel-no-toolkit.sh) or the build
tree's package laid out as the wheel's (scripts/test.sh): its greenctx program and preload library,
``python -m greenctx``, the console script where pip installed one, and the ELF dependencies of
every binary in it.
"""
import os
import shutil
import struct
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import greenctx
from greenctx import _cli

PACKAGE = Path(greenctx.__file__).resolve().parent
NO_DRIVER = {**os.environ, "GREENCTX_LIBCUDA": "/nonexistent/libcuda.so.1"}

# What a binary of the wheel may need: glibc, the C++ runtime. Not libcuda (opened at run time),
# not libcudart or any CUDA library.
ALLOWED = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libdl.so.2",
           "libpthread.so.0", "librt.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}


def needed(path: Path) -> list[str]:
    """The DT_NEEDED entries of a 64-bit little-endian ELF file."""
    data = path.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, f"{path}: not a 64-bit LE ELF"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[link]
        for i in range(size // entsize):
            tag, value = struct.unpack_from("<qQ", data, offset + i * entsize)
            if tag == 1:  # DT_NEEDED
                start = strtab[4] + value
                out.append(data[start:data.index(b"\0", start)].decode())
    return out


def elf_files():
    for p in sorted(PACKAGE.rglob("*")):
        if p.is_file() and p.read_bytes()[:4] == b"\x7fELF":
            yield p


def test_the_package_carries_the_program_and_the_preload_library():
    assert os.access(_cli.program(), os.X_OK), _cli.program()
    assert (PACKAGE / "lib" / "libgreenctx_preload.so").is_file()


def test_every_binary_needs_only_glibc_and_the_cpp_runtime():
    files = list(elf_files())
    assert len(files) >= 3, files  # the module, the program, the preload library
    for f in files:
        extra = [n for n in needed(f) if n not in ALLOWED]
        assert not extra, f"{f.relative_to(PACKAGE)} needs {extra}"


def installed_by_pip() -> bool:
    try:
        files = metadata.distribution("greenctx").files or []
    except metadata.PackageNotFoundError:
        return False
    return any(PACKAGE == Path(f.locate()).resolve().parent for f in files)


def check_help(cmd: list[str]) -> None:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r
    assert r.stdout.startswith("greenctx: partition a GPU's SMs"), r.stdout
    assert "\n  run " in r.stdout and "\n  mps " in r.stdout, r.stdout


def test_python_m_greenctx_runs_the_program():
    check_help([sys.executable, "-m", "greenctx", "--help"])


def test_the_command_runs_the_program():
    if not installed_by_pip():
        pytest.skip(f"{PACKAGE} is a build tree's package, not installed by pip: the console script "
                    "is checked on the installed wheel (scripts/release.sh)")
    script = shutil.which("greenctx", path=str(Path(sys.executable).parent))
    assert script, "pip put no greenctx command beside the interpreter"
    check_help([script, "--help"])


def test_without_a_driver_info_and_run_say_so():
    r = subprocess.run([sys.executable, "-m", "greenctx", "info"], capture_output=True, text=True,
                       env=NO_DRIVER, timeout=60)
    assert r.returncode == 3, r
    assert "no NVIDIA driver" in r.stderr, r.stderr
    # run finds and loads its preload library inside the package (a missing one is exit 4), then
    # stops at the driver.
    r = subprocess.run([sys.executable, "-m", "greenctx", "run", "--sms", "16", "--", "true"],
                       capture_output=True, text=True, env=NO_DRIVER, timeout=60)
    assert r.returncode == 3, r
    assert "preload" not in r.stderr, r.stderr
