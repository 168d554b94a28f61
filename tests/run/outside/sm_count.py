# SPDX-License-Identifier: Apache-2.0
"""What Python frameworks read for the SM count: torch (multi_processor_count), CuPy (the
runtime attribute, the properties, Device.attributes), numba (MULTIPROCESSOR_COUNT), Triton (its
driver's get_device_properties), JAX (core_count) and cuda.core (DeviceProperties). Each route
runs in a child process of its own (python3 sm_count.py --route NAME), so that the frameworks do
not meet and one that crashes does not hide the others. Knows nothing of greenctx.

    python3 sm_count.py --out FILE [--routes torch,cupy,...]

Prints on stdout only which routes gave a number and whether they agree (the same plain and
confined); the numbers go to FILE as "ROUTE VALUE" lines (check_run.py --sm-count-file). A route
whose framework is missing is left out (said on stderr); one that fails is printed as failed.
Exits 77 when no route gave a number, 1 when they disagree or one failed.
"""
import os
import subprocess
import sys

import common

NAME = "sm_count.py"


def torch_route():
    import torch
    yield "torch.multi_processor_count", torch.cuda.get_device_properties(0).multi_processor_count


def cupy_route():
    import cupy
    rt = cupy.cuda.runtime
    yield "cupy.deviceGetAttribute", rt.deviceGetAttribute(rt.cudaDevAttrMultiProcessorCount, 0)
    yield "cupy.getDeviceProperties", rt.getDeviceProperties(0)["multiProcessorCount"]
    yield "cupy.Device.attributes", cupy.cuda.Device(0).attributes["MultiProcessorCount"]


def numba_route():
    from numba import cuda
    yield "numba.MULTIPROCESSOR_COUNT", cuda.get_current_device().MULTIPROCESSOR_COUNT


def triton_route():
    import torch
    import triton
    torch.cuda.init()
    props = triton.runtime.driver.active.utils.get_device_properties(0)
    yield "triton.get_device_properties", props["multiprocessor_count"]


def jax_route():
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    count = getattr(jax.devices("gpu")[0], "core_count", None)
    if count is None:
        raise ImportError("this JAX's GPU device has no core_count")
    yield "jax.core_count", count


def cuda_core_route():
    try:
        from cuda.core import Device
    except ImportError:
        from cuda.core.experimental import Device
    yield "cuda.core.multiprocessor_count", Device(0).properties.multiprocessor_count


ROUTES = {"torch": torch_route, "cupy": cupy_route, "numba": numba_route,
          "triton": triton_route, "jax": jax_route, "cuda.core": cuda_core_route}


def child(name):
    try:
        values = list(ROUTES[name]())
    except ImportError as e:
        print(f"{NAME}: {name}: not available ({e})", file=sys.stderr)
        return common.SKIP
    except Exception as e:
        print(f"{NAME}: {name}: {type(e).__name__}: {e}".replace("\n", " "), file=sys.stderr)
        return 1
    for route, value in values:
        print(route, int(value))
    return 0


def main(argv):
    out = common.option(argv, "--out")
    if not out:
        sys.exit("usage: sm_count.py --out FILE [--routes torch,cupy,numba,triton,jax,cuda.core]")
    names = (common.option(argv, "--routes") or ",".join(ROUTES)).split(",")
    if common.gpu_count() == 0:
        common.skip(NAME, "the CUDA driver sees no GPU (libcuda.so.1 missing, cuInit failed, or "
                          "no device)")
    read, failed, lines = [], [], []
    for name in names:
        try:
            r = subprocess.run([sys.executable, __file__, "--route", name], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=300)
            rc, text, err = r.returncode, r.stdout, r.stderr
        except subprocess.TimeoutExpired:
            rc, text, err = "timeout", "", "timed out after 300 s"
        sys.stderr.write(err)
        if rc == common.SKIP:
            continue
        if rc != 0 or not text.strip():
            failed.append(name)
            common.say(NAME, f"{name}: failed ({rc})")
            continue
        read.append(name)
        lines += text.strip().splitlines()
    with open(out, "w") as f:
        f.write("".join(line + "\n" for line in lines))
    values = {line.split()[1] for line in lines}
    for line in lines:
        common.say(NAME, line)
    if not read and not failed:
        common.skip(NAME, "no framework gave an SM count (none installed, or no GPU)")
    agree = len(values) == 1 and not failed
    print(f"SM count read by: {', '.join(read) or 'none'}; failed: {', '.join(failed) or 'none'}; "
          f"agree: {'yes' if agree else 'no'}")
    return 0 if agree else 1


if __name__ == "__main__":
    if sys.argv[1:2] == ["--route"] and len(sys.argv) == 3:
        sys.exit(child(sys.argv[2]))
    sys.exit(main(sys.argv[1:]))
