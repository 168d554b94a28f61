# SPDX-License-Identifier: Apache-2.0
# The CUDA toolkit taken from PyPI where a machine has none: the versions of NVIDIA's wheels, in one
# place for scripts/setup.sh (sourced) and for the pip build's own step (cmake/cuda_from_pypi.cmake
# reads these lines). They are the CUDA 13.0 of this project's machines (see
# scripts/cuda-toolkit-pypi.sh for why each).
GREENCTX_PYPI_CUDA_DEFAULT=13.0.88
GREENCTX_PYPI_RUNTIME_DEFAULT=13.0.96
GREENCTX_PYPI_CUBLAS_DEFAULT=13.1.0.3
GREENCTX_PYPI_CCCL_DEFAULT=13.0.85
