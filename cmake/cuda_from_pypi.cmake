# SPDX-License-Identifier: Apache-2.0
# The CUDA toolkit's pieces from PyPI for a pip build on a machine without a toolkit:
# included by CMakeLists.txt when scikit-build-core builds (SKBUILD), no nvcc is named and none is
# found. scripts/cuda-toolkit-pypi.sh lays out nvcc, cudart, the headers and cuBLAS at the versions
# of scripts/lib/cuda-pypi-versions.sh (those scripts/setup.sh uses) in the build folder, with the
# Python that runs the build (its pip; network access to PyPI needed), and the build then uses
# them like an installed toolkit. GREENCTX_CUDA_FROM_PYPI=ON takes this path even where a toolkit
# is installed.
file(STRINGS ${PROJECT_SOURCE_DIR}/scripts/lib/cuda-pypi-versions.sh greenctx_pypi_lines
     REGEX "^GREENCTX_PYPI_[A-Z]+_DEFAULT=")
foreach(line IN LISTS greenctx_pypi_lines)
  string(REGEX MATCH "^GREENCTX_PYPI_([A-Z]+)_DEFAULT=(.*)$" _ "${line}")
  set(greenctx_pypi_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
endforeach()
foreach(part IN ITEMS CUDA RUNTIME CUBLAS CCCL)
  if(NOT greenctx_pypi_${part})
    message(FATAL_ERROR "scripts/lib/cuda-pypi-versions.sh names no GREENCTX_PYPI_${part}_DEFAULT")
  endif()
endforeach()
set(greenctx_pypi_root ${CMAKE_BINARY_DIR}/cuda-pypi-${greenctx_pypi_CUDA})
set(greenctx_python python3)
if(Python_EXECUTABLE)
  set(greenctx_python ${Python_EXECUTABLE})
endif()
set(greenctx_why "no CUDA toolkit found")
if(GREENCTX_CUDA_FROM_PYPI)
  set(greenctx_why "GREENCTX_CUDA_FROM_PYPI=ON")
endif()
message(STATUS "greenctx: ${greenctx_why}: CUDA ${greenctx_pypi_CUDA}'s pieces from PyPI "
               "into ${greenctx_pypi_root} (with ${greenctx_python})")
execute_process(
  # Without pip's build isolation (its PYTHONPATH), so that the interpreter finds its own pip.
  COMMAND ${CMAKE_COMMAND} -E env --unset=PYTHONPATH --unset=PYTHONNOUSERSITE
          GREENCTX_PYTHON=${greenctx_python}
          bash ${PROJECT_SOURCE_DIR}/scripts/cuda-toolkit-pypi.sh ${greenctx_pypi_root}
          --version ${greenctx_pypi_CUDA} --runtime-version ${greenctx_pypi_RUNTIME}
          --cublas --cublas-version ${greenctx_pypi_CUBLAS} --cccl-version ${greenctx_pypi_CCCL}
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "greenctx: the CUDA toolkit could not be taken from PyPI (above: why). "
                      "Install the CUDA toolkit (12.4 or newer) or put its bin/ on PATH, or give "
                      "pip -C cmake.define.CMAKE_CUDA_COMPILER=<nvcc>")
endif()
set(CUDAToolkit_ROOT ${greenctx_pypi_root} CACHE PATH "the CUDA toolkit (from PyPI)" FORCE)
set(CMAKE_CUDA_COMPILER ${greenctx_pypi_root}/bin/nvcc CACHE FILEPATH "nvcc (from PyPI)" FORCE)
