# SPDX-License-Identifier: Apache-2.0
"""What torch_train.py, torch_graphs.py and torch_ddp.py share: torch and a GPU (or the skip code 77
with the reason), full-precision matmuls, the model (three nn.Linear layers with GELU between them,
initial weights from seed 0) and one eager training step. Knows nothing of greenctx."""
import sys

SKIP = 77


def cuda_torch(name):
    """torch with a GPU, tf32 off; None (after saying why on stderr) when there is neither."""
    try:
        import torch
    except ImportError as e:
        print(f"{name}: torch is not installed ({e}): skipped", file=sys.stderr)
        return None
    if not torch.cuda.is_available():
        print(f"{name}: no CUDA GPU visible to torch: skipped", file=sys.stderr)
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


def model(torch, dev):
    """256 -> 2048 -> 2048 -> 10, wide enough that the GPU lags the host by milliseconds."""
    torch.manual_seed(0)  # the layers' initial weights (made on the CPU, then copied)
    return torch.nn.Sequential(
        torch.nn.Linear(256, 2048), torch.nn.GELU(),
        torch.nn.Linear(2048, 2048), torch.nn.GELU(),
        torch.nn.Linear(2048, 10)).to(dev)


def train_step(model, loss_fn, opt, x, y):
    """One eager SGD step (forward on this thread, backward on autograd's); returns the loss."""
    opt.zero_grad(set_to_none=True)
    loss = loss_fn(model(x), y)
    loss.backward()
    opt.step()
    return loss
