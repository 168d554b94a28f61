# SPDX-License-Identifier: Apache-2.0
# Sourced by the GPU checks: NCCL for the comm tests and bench --comm. The library opens
# GREENCTX_NCCL_LIBRARY or the loader's libnccl.so.2 only; unless it is set, this exports the NCCL
# of python3's NVIDIA wheels (torch's), found as the Python package's greenctx command finds it.
if [ -z "${GREENCTX_NCCL_LIBRARY:-}" ]; then
  GREENCTX_NCCL_LIBRARY=$(python3 -c 'import runpy; print(runpy.run_path("python/greenctx/_cli.py")["nccl_library"]() or "")' 2>/dev/null || true)
  export GREENCTX_NCCL_LIBRARY
fi
