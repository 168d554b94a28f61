# SPDX-License-Identifier: Apache-2.0
"""What the PyTorch examples share: the greenctx CLI's exit codes, argument types for positive
numbers, nearest-rank percentiles, opening the GPU in both PyTorch and greenctx, and a loop of
matmuls kept queued on one stream. Imported by the examples from their own folder (`python
examples/NAME.py` puts it on the path)."""
from __future__ import annotations

import argparse
import collections
import contextlib
import math
import re
import shutil
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any, Iterator, NoReturn, Sequence

if TYPE_CHECKING:  # imported for real by open_gpu, which says what is missing
    import greenctx


def fail(prog: str, code: int, message: str) -> NoReturn:
    """Prints "PROG: message" to stderr and exits with `code` (the CLI's codes: 2 bad arguments or
    a request this GPU cannot make, 3 no PyTorch/module/driver/GPU, 4 a driver feature missing,
    5 another CUDA error)."""
    print(f"{prog}: {message}", file=sys.stderr)
    sys.exit(code)


@contextlib.contextmanager
def exit_codes(prog: str) -> Iterator[None]:
    """greenctx's errors, and torch's RuntimeError (its CUDA errors), inside the block end the
    program with the CLI's exit code and the message: 2 a request the GPU cannot meet, 4 a driver
    feature missing, 5 any other."""
    import greenctx
    try:
        yield
    except greenctx.RequestError as e:
        fail(prog, 2, str(e))
    except greenctx.UnsupportedError as e:
        fail(prog, 4, str(e))
    except greenctx.Error as e:
        fail(prog, 5, str(e))
    except RuntimeError as e:
        fail(prog, 5, f"CUDA error in torch: {e}")


def positive_int(text: str) -> int:
    """An argparse type: a whole number above zero."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} is not a positive number")
    return value


def positive_float(text: str) -> float:
    """An argparse type: a finite number above zero."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a number") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"{text} is not a positive finite number")
    return value


def nvidia_driver_version() -> str | None:
    """The kernel driver's version (e.g. '580.159.04'), or None."""
    try:
        with open("/proc/driver/nvidia/version") as f:
            m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([0-9][0-9.]+)", f.read())
            if m:
                return m.group(1)
    except OSError:
        pass
    if shutil.which("nvidia-smi"):
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                                  "--format=csv,noheader", "-i", "0"],
                                 capture_output=True, text=True, timeout=20)
            if out.returncode == 0 and out.stdout.strip():
                return out.stdout.strip().splitlines()[0]
        except (OSError, subprocess.SubprocessError):
            pass
    return None


def percentile(samples: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100); None for no samples."""
    if not samples:
        return None
    s = sorted(samples)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def open_gpu(prog: str, device: int) -> tuple[Any, greenctx.DriverInfo, greenctx.Device]:
    """Imports torch and greenctx, checks that both see GPU `device` and makes it torch's current
    device. Exits 3 without PyTorch, the greenctx module, a driver or a GPU, and 2 for an ordinal
    the driver does not have. Returns (torch, driver info, greenctx.Device); the caller imports
    greenctx itself afterwards, so that a type checker knows the module's names."""
    try:
        import torch
    except ImportError as e:
        fail(prog, 3, f"needs PyTorch with CUDA (import torch failed: {e})")
    try:
        import greenctx
    except ImportError as e:
        fail(prog, 3,
             f"needs the greenctx module (pip install . in the repository; import failed: {e})")
    if not torch.cuda.is_available():
        fail(prog, 3, f"no GPU: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no "
                      f"CUDA device")
    try:
        driver = greenctx.query_driver()
        count = greenctx.Device.count()
        if count <= device:
            fail(prog, 2 if count else 3, f"no GPU {device}: the driver sees {count}")
        gpu = greenctx.Device(device)
    except greenctx.Error as e:
        fail(prog, 3, f"no GPU: {e}")
    torch.cuda.set_device(device)
    return torch, driver, gpu


class GemmLoop:
    """Keeps about `target_ms` of NxN matmuls queued on `stream` (torch's current device), counting
    those completed. `gemm_ms` is one matmul's time on that stream, measured at construction."""

    def __init__(self, torch: Any, stream: Any, size: int, dtype: Any,
                 target_ms: float = 10.0) -> None:
        self.torch, self.stream = torch, stream
        with torch.cuda.stream(stream):
            self.a = torch.randn(size, size, device="cuda", dtype=dtype)
            self.b = torch.randn(size, size, device="cuda", dtype=dtype)
            self.c = torch.empty(size, size, device="cuda", dtype=dtype)
            torch.matmul(self.a, self.b, out=self.c)  # warm-up: handle, workspace, kernel choice
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(3):
                torch.matmul(self.a, self.b, out=self.c)
            end.record()
        end.synchronize()
        self.gemm_ms = start.elapsed_time(end) / 3
        self.flops = 2.0 * size ** 3
        self.depth = min(256, max(2, math.ceil(target_ms / max(self.gemm_ms, 1e-3))))
        self.pending: collections.deque[Any] = collections.deque()  # torch.cuda.Event
        self.restart()

    def restart(self) -> None:
        """Counts from zero again (the rate is then over the time since the next top_up)."""
        self.completed = 0
        self.started_at: float | None = None

    def top_up(self) -> None:
        torch = self.torch
        if self.started_at is None:
            self.started_at = time.perf_counter()
        while self.pending and self.pending[0].query():
            self.pending.popleft()
            self.completed += 1
        while len(self.pending) < self.depth:
            with torch.cuda.stream(self.stream):
                torch.matmul(self.a, self.b, out=self.c)
                done = torch.cuda.Event()
                done.record()
            self.pending.append(done)

    def drain(self) -> float:
        """Waits for the queue; returns TFLOP/s over the time since the first top_up."""
        assert self.started_at is not None, "drain() before top_up()"
        while self.pending:
            self.pending.popleft().synchronize()
            self.completed += 1
        return self.completed * self.flops / (time.perf_counter() - self.started_at) / 1e12
