# SPDX-License-Identifier: Apache-2.0
"""CUDA IPC between two processes, with CuPy: the parent allocates a device buffer (cudaMalloc)
and hands its cudaIpcMemHandle to a child process; the parent then runs a kernel that spins
200 ms before it writes the buffer, records an interprocess event and hands that over too; the
child opens both, makes its stream wait for the event, reads the buffer (a sum) and rewrites it
(x * 2 + 1); the parent checks the child's writes. A child that read before the parent's kernel
ended would see zeros. Prints exact sums. Both processes end themselves after 120 s (SIGALRM).
Exits 77 without CuPy or a GPU, 1 on a wrong value.

    python3 cuda_ipc.py        (the child is: python3 cuda_ipc.py --child, driven over pipes)
"""
import signal
import subprocess
import sys

import common

NAME = "cuda_ipc"
N = 1 << 20

WRITE_LATE = r"""
extern "C" __global__ void write_late(long long *x, unsigned n, unsigned long long spin_ns) {
  if (threadIdx.x == 0) {  // every block waits first: nothing is written before spin_ns
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    const long long c0 = clock64();
    do {
      asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < spin_ns && clock64() - c0 < (long long)spin_ns * 4 + 100000);
  }
  __syncthreads();
  for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = 3LL * i + 1;
}
"""


def device_array(cp, ptr):
    mem = cp.cuda.UnownedMemory(ptr, N * 8, None)
    return cp.ndarray((N,), dtype=cp.int64, memptr=cp.cuda.MemoryPointer(mem, 0))


def child():
    cp = common.need(NAME + " child", "cupy")
    rt = cp.cuda.runtime
    ptr = rt.ipcOpenMemHandle(bytes.fromhex(sys.stdin.readline().strip()))
    stream = cp.cuda.Stream(non_blocking=True)
    print("ready", flush=True)
    event = rt.ipcOpenEventHandle(bytes.fromhex(sys.stdin.readline().strip()))
    rt.streamWaitEvent(stream.ptr, event, 0)
    x = device_array(cp, ptr)
    with stream:
        total = int(x.sum())  # waits for the parent's kernel, through the event
        x *= 2
        x += 1
    stream.synchronize()
    print(total, flush=True)
    rt.eventDestroy(event)
    rt.ipcCloseMemHandle(ptr)
    return 0


def parent():
    cp = common.need(NAME, "cupy")
    rt = cp.cuda.runtime
    try:
        if rt.getDeviceCount() == 0:
            common.skip(NAME, "no CUDA device for CuPy")
    except rt.CUDARuntimeError as e:
        common.skip(NAME, f"no CUDA device for CuPy ({e})")
    ptr = rt.malloc(N * 8)  # a whole allocation: an IPC handle names one
    x = device_array(cp, ptr)
    x.fill(0)
    kernel = cp.RawKernel(WRITE_LATE, "write_late")
    stream = cp.cuda.Stream(non_blocking=True)
    event = cp.cuda.Event(block=False, disable_timing=True, interprocess=True)
    rt.deviceSynchronize()
    kid = subprocess.Popen([sys.executable, __file__, "--child"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    kid.stdin.write(bytes(rt.ipcGetMemHandle(ptr)).hex() + "\n")
    kid.stdin.flush()
    if kid.stdout.readline().strip() != "ready":
        print("cuda_ipc: the child did not open the memory handle", file=sys.stderr)
        return 1
    with stream:  # a RawKernel runs on the current stream
        kernel((64,), (256,), (x, cp.uint32(N), cp.uint64(200_000_000)))
    event.record(stream)
    kid.stdin.write(bytes(rt.ipcGetEventHandle(event.ptr)).hex() + "\n")
    kid.stdin.flush()
    out, _ = kid.communicate(timeout=100)
    want = sum(3 * i + 1 for i in range(N))
    try:
        seen = int(out.strip())
    except ValueError:
        seen = None
    stream.synchronize()
    final = int(x.sum())
    print(f"child exit {kid.returncode}, read sum {seen} (parent wrote {want}): "
          f"{seen == want}")
    print(f"parent reads the child's writes: sum {final}: {final == 2 * want + N}")
    rt.free(ptr)
    return 0 if kid.returncode == 0 and seen == want and final == 2 * want + N else 1


if __name__ == "__main__":
    signal.alarm(120)  # a lost handshake ends both processes instead of hanging
    sys.exit(child() if sys.argv[1:] == ["--child"] else parent())
