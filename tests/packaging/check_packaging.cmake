# SPDX-License-Identifier: Apache-2.0
# Proves that greenctx can be consumed the ways README.md documents. Run by ctest (see
# tests/CMakeLists.txt) as
#   cmake -DMODE=<find_package|pkg_config|add_subdirectory> -DWORK_DIR=<fresh dir> ... -P this file
#
#   find_package      cmake --install the build tree into WORK_DIR/prefix, then configure, build
#                     and run tests/packaging/consumer with CMAKE_PREFIX_PATH=that prefix.
#   pkg_config        the same install, then compile consumer/main.cpp with
#                     CXX $(pkg-config --cflags greenctx) and consumer/device_side.cu with
#                     nvcc $(pkg-config --cflags greenctx), link with nvcc and
#                     $(pkg-config --libs greenctx), and run it.
#   add_subdirectory  configure, build and run the consumer with add_subdirectory(<greenctx source>);
#                     the consumer fails to configure if greenctx's tools or tests are there.
#
# The consumer runs twice: as is (query_driver() works, or throws greenctx::error without a GPU)
# and with GREENCTX_LIBCUDA pointing at a missing library (it must throw CUDA_ERROR_NO_DEVICE).
#
# Variables: MODE, WORK_DIR, SOURCE_DIR (greenctx source), BINARY_DIR (its build tree, for the
# install), CXX_COMPILER, GENERATOR, MAKE_PROGRAM, CUDA_ROOT (the consumer's toolkit: its nvcc and
# headers), INSTALL_LIBDIR, PKG_CONFIG, EXPECTED_VERSION; CONSUMER_CMAKE, the cmake that configures
# and builds the consumer (default: the one running this), so that the same install is used from
# other CMake versions.
cmake_minimum_required(VERSION 3.25)

foreach(var IN ITEMS MODE WORK_DIR SOURCE_DIR CXX_COMPILER GENERATOR)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "check_packaging.cmake: -D${var}=... is required")
  endif()
endforeach()

set(consumer_source ${CMAKE_CURRENT_LIST_DIR}/consumer)
set(consumer_cmake ${CMAKE_COMMAND})
if(CONSUMER_CMAKE)
  set(consumer_cmake ${CONSUMER_CMAKE})
endif()
# The consumer has a CUDA file: the toolkit's nvcc compiles it (and, for pkg-config, links).
find_program(nvcc NAMES nvcc HINTS ${CUDA_ROOT}/bin NO_DEFAULT_PATH)
if(NOT nvcc)
  message(FATAL_ERROR "no nvcc in ${CUDA_ROOT}/bin (-DCUDA_ROOT=<the toolkit>)")
endif()
set(prefix ${WORK_DIR}/prefix)

# A fresh directory for every run.
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})

# Runs a command, echoing it and its output; stops the test when it fails.
function(step name)
  message(STATUS "== ${name}")
  execute_process(COMMAND ${ARGN} COMMAND_ECHO STDOUT
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out
                  ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${name} failed (exit ${rc})")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

function(install_greenctx)
  if(NOT DEFINED BINARY_DIR OR NOT EXISTS ${BINARY_DIR}/cmake_install.cmake)
    message(FATAL_ERROR "-DBINARY_DIR=<greenctx build tree with install rules> is required")
  endif()
  step("install greenctx into ${prefix}" ${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${prefix})
  set(expected
      include/greenctx/greenctx.hpp
      ${INSTALL_LIBDIR}/cmake/greenctx/greenctxConfig.cmake
      ${INSTALL_LIBDIR}/cmake/greenctx/greenctxConfigVersion.cmake
      ${INSTALL_LIBDIR}/cmake/greenctx/greenctxTargets.cmake
      ${INSTALL_LIBDIR}/pkgconfig/greenctx.pc
      include/greenctx/version.hpp
      share/doc/greenctx/LICENSE
      share/doc/greenctx/NOTICE)
  if(EXISTS ${BINARY_DIR}/tools/greenctx/greenctx)
    list(APPEND expected bin/greenctx ${INSTALL_LIBDIR}/libgreenctx_preload.so
         share/bash-completion/completions/greenctx)
  endif()
  if(EXISTS ${BINARY_DIR}/tools/greenctx/greenctx.1)
    list(APPEND expected share/man/man1/greenctx.1)
  endif()
  foreach(file IN LISTS expected)
    if(NOT EXISTS ${prefix}/${file})
      file(GLOB_RECURSE installed RELATIVE ${prefix} ${prefix}/*)
      list(JOIN installed "\n  " installed)
      message(FATAL_ERROR "the install has no ${file}; it has:\n  ${installed}")
    endif()
  endforeach()
  # The installed command finds its preload library in this layout's library folder: greenctx run
  # over the tests' fake driver.
  if(EXISTS ${prefix}/bin/greenctx AND FAKE_CUDA)
    step("the installed greenctx run" ${CMAKE_COMMAND} -E env GREENCTX_LIBCUDA=${FAKE_CUDA}
         ${prefix}/bin/greenctx run --sms 16 -- true)
  endif()
  # greenctx.pc names no folder of the machine that built it: only its own variables.
  file(READ ${prefix}/${INSTALL_LIBDIR}/pkgconfig/greenctx.pc pc)
  foreach(machine_path IN ITEMS "${SOURCE_DIR}" "${BINARY_DIR}" "${CUDA_ROOT}")
    string(FIND "${pc}" "${machine_path}" at)
    if(machine_path AND at GREATER -1)
      message(FATAL_ERROR "greenctx.pc names ${machine_path}, a folder of the build machine:\n${pc}")
    endif()
  endforeach()
endfunction()

# Runs the built consumer: normally, then with no driver to load.
function(run_consumer exe)
  step("run the consumer" ${exe})
  step("run the consumer without a driver"
       ${CMAKE_COMMAND} -E env GREENCTX_LIBCUDA=/nonexistent/libcuda.so.1
       ${exe} --expect-no-driver)
endfunction()

# Configures and builds tests/packaging/consumer with extra -D arguments.
function(build_consumer_with_cmake)
  set(build ${WORK_DIR}/consumer-build)
  set(args -S ${consumer_source} -B ${build} -G ${GENERATOR}
           -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=RelWithDebInfo)
  if(MAKE_PROGRAM)
    list(APPEND args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
  endif()
  if(CUDA_ROOT)
    list(APPEND args -DCUDAToolkit_ROOT=${CUDA_ROOT} -DCMAKE_CUDA_COMPILER=${nvcc})
  endif()
  execute_process(COMMAND ${consumer_cmake} --version OUTPUT_VARIABLE version)
  string(REGEX MATCH "[0-9][0-9.]*" version "${version}")
  execute_process(COMMAND ${nvcc} --version OUTPUT_VARIABLE nvcc_version)
  string(REGEX MATCH "release [0-9.]+" nvcc_version "${nvcc_version}")
  message(STATUS "the consumer: CMake ${version}, nvcc ${nvcc_version}")
  step("configure the consumer" ${consumer_cmake} ${args} ${ARGN})
  step("build the consumer" ${consumer_cmake} --build ${build} --parallel 1)
  set(consumer_exe ${build}/consumer PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "find_package")
  install_greenctx()
  build_consumer_with_cmake(-DCMAKE_PREFIX_PATH=${prefix} -DGREENCTX_EXPECTED_PREFIX=${prefix}
                            -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  run_consumer(${consumer_exe})

elseif(MODE STREQUAL "pkg_config")
  if(NOT PKG_CONFIG)
    message(FATAL_ERROR "pkg-config was not found (scripts/setup.sh installs it)")
  endif()
  install_greenctx()
  set(pc_dir ${prefix}/${INSTALL_LIBDIR}/pkgconfig)
  set(pkg_config ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${pc_dir} ${PKG_CONFIG})
  step("pkg-config --modversion" ${pkg_config} --modversion greenctx)
  string(STRIP "${step_output}" version)
  if(EXPECTED_VERSION AND NOT version STREQUAL EXPECTED_VERSION)
    message(FATAL_ERROR "greenctx.pc says version ${version}, the project is ${EXPECTED_VERSION}")
  endif()
  # The .pc file must point into the prefix it was installed to, not the configure-time prefix.
  foreach(variable IN ITEMS includedir libdir)
    step("pkg-config --variable=${variable}" ${pkg_config} --variable=${variable} greenctx)
    string(STRIP "${step_output}" dir)
    file(REAL_PATH "${dir}" dir)
    file(REAL_PATH "${prefix}" real_prefix)
    cmake_path(IS_PREFIX real_prefix "${dir}" NORMALIZE inside)
    if(NOT inside)
      message(FATAL_ERROR "greenctx.pc installed under ${prefix} has ${variable}=${dir}, "
                          "outside the prefix it was installed to")
    endif()
  endforeach()
  foreach(part IN ITEMS cflags libs)
    step("pkg-config --${part}" ${pkg_config} --${part} greenctx)
    string(STRIP "${step_output}" ${part})
    separate_arguments(${part} UNIX_COMMAND "${${part}}")
  endforeach()
  set(consumer_exe ${WORK_DIR}/consumer)
  # Nothing but pkg-config's flags sets the standard, for the C++ and for the CUDA file.
  # pkg-config gives greenctx's flags; the CUDA toolkit's headers are the consumer's to add, as
  # docs/cpp.md says (nvcc adds them itself).
  step("compile main.cpp with pkg-config's flags and the toolkit's headers"
       ${CXX_COMPILER} -Wall -Wextra ${cflags} -I${CUDA_ROOT}/include -c ${consumer_source}/main.cpp
       -o ${WORK_DIR}/main.o)
  step("compile device_side.cu with nvcc and pkg-config's flags"
       ${nvcc} -arch=sm_90 ${cflags} -c ${consumer_source}/device_side.cu
       -o ${WORK_DIR}/device_side.o)
  step("link the consumer with nvcc and pkg-config's libraries"
       ${nvcc} -arch=sm_90 ${WORK_DIR}/main.o ${WORK_DIR}/device_side.o ${libs}
       -o ${consumer_exe})
  run_consumer(${consumer_exe})

elseif(MODE STREQUAL "add_subdirectory")
  build_consumer_with_cmake(-DGREENCTX_SOURCE_DIR=${SOURCE_DIR})
  # Nothing of greenctx but the library (and its kernels) may have been built.
  file(GLOB_RECURSE built LIST_DIRECTORIES false RELATIVE ${WORK_DIR}/consumer-build/greenctx-build
       ${WORK_DIR}/consumer-build/greenctx-build/*)
  foreach(file IN LISTS built)
    if(file MATCHES "(^|/)(greenctx|greenctx_(cpu|gpu|no_driver)_tests)$")
      message(FATAL_ERROR "add_subdirectory built ${file}; only the library should be built")
    endif()
  endforeach()
  run_consumer(${consumer_exe})

else()
  message(FATAL_ERROR "unknown MODE '${MODE}' (find_package, pkg_config or add_subdirectory)")
endif()

message(STATUS "packaging check '${MODE}' passed")
