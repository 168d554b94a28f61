"""What the PyTorch examples share: the greenctx CLI's exit codes, nearest-rank percentiles, and
opening the GPU in both PyTorch and greenctx. Imported by the examples from their own folder
(`python examples/NAME.py` puts it on the path)."""
import math
import sys


def fail(prog, code, message):
    """Prints "PROG: message" to stderr and exits with `code` (the CLI's codes: 2 bad arguments or
    a request this GPU cannot make, 3 no PyTorch/module/driver/GPU, 4 a driver feature missing,
    5 another CUDA error)."""
    print(f"{prog}: {message}", file=sys.stderr)
    sys.exit(code)


def percentile(samples, q):
    """Nearest-rank percentile (q in 0..100); None for no samples."""
    if not samples:
        return None
    s = sorted(samples)
    return s[max(0, math.ceil(q / 100 * len(s)) - 1)]


def open_gpu(prog, device):
    """Imports torch and greenctx, checks that both see GPU `device` and makes it torch's current
    device. Exits 3 without PyTorch, the greenctx module, a driver or a GPU, and 2 for an ordinal
    the driver does not have. Returns (torch, greenctx, driver info, greenctx.Device)."""
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
    return torch, greenctx, driver, gpu
