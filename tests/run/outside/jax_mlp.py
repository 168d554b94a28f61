# SPDX-License-Identifier: Apache-2.0
"""JAX, unmodified: a jit-compiled training step (value_and_grad, SGD) of a small MLP, 10 steps on
data made by numpy on the CPU (seeded), matmuls at full fp32 precision (no TF32); then a bf16
matmul of small integers with fp32 results, which is exact whatever kernel XLA picks. Prints the
losses with repr() and the matmul's sum; stdouts are compared within --tolerance 1e-5 (XLA's
autotuned GEMMs may differ in the last bits with fewer SMs). The train step is then checked with
fill.py. Exits 77 without JAX or a GPU, 1 on a wrong result or an escape.

    python3 jax_mlp.py
"""
import math
import os
import sys

import common
import fill

NAME = "jax_mlp"


def main():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # room for CuPy's fill
    jax = common.need(NAME, "jax")
    import jax.numpy as jnp
    import numpy as np
    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError as e:
        common.skip(NAME, f"JAX sees no GPU ({e})".replace("\n", " "))
    jax.config.update("jax_default_matmul_precision", "highest")

    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 64)).astype(np.float32)
    y = (x @ rng.standard_normal((64, 10)).astype(np.float32)).argmax(axis=1).astype(np.int32)
    sizes = [64, 512, 512, 10]
    params = [(rng.standard_normal((m, n)).astype(np.float32) * np.float32(math.sqrt(2 / m)),
               np.zeros(n, np.float32)) for m, n in zip(sizes, sizes[1:])]
    x, y, params = jax.device_put((x, y, params), gpu)

    def loss_fn(params, x, y):
        h = x
        for w, b in params[:-1]:
            h = jax.nn.gelu(h @ w + b)
        w, b = params[-1]
        logp = jax.nn.log_softmax(h @ w + b)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return loss, jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads)

    losses = []
    with common.timer(NAME, "10 training steps"):
        for i in range(10):
            loss, params = step(params, x, y)
            losses.append(float(loss))
            print(f"step {i} loss {losses[-1]!r}")
    good = all(math.isfinite(v) for v in losses) and losses[-1] < losses[0]
    print(f"loss finite and fell: {good}")

    a = rng.integers(-2, 3, size=(512, 768)).astype(np.float32)
    b = rng.integers(-2, 3, size=(768, 256)).astype(np.float32)
    mm = jax.jit(lambda a, b: jnp.matmul(a, b, preferred_element_type=jnp.float32))
    c = np.asarray(mm(jax.device_put(a.astype(jnp.bfloat16), gpu),
                      jax.device_put(b.astype(jnp.bfloat16), gpu)))
    exact = bool((c == a @ b).all())
    print(f"bf16 matmul 512x768x256 of integers: sum {int(c.astype(np.int64).sum())}, "
          f"exact: {exact}")

    confined = fill.check("jax train step", lambda: jax.block_until_ready(step(params, x, y)))
    return 0 if good and exact and confined is not False else 1


if __name__ == "__main__":
    sys.exit(main())
