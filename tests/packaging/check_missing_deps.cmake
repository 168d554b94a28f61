# SPDX-License-Identifier: Apache-2.0
# A build without the command's libraries stops at the configure step, naming every missing one
# with its Debian package (ctest cpu.packaging.missing_dependencies): greenctx configured in
# WORK_DIR with CLI11 and fmt hidden (CMAKE_DISABLE_FIND_PACKAGE_<name>).
#
#   cmake -DSOURCE_DIR=... -DWORK_DIR=... -DCUDA_ROOT=... -DGENERATOR=... -P this file
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G ${GENERATOR}
          -DCUDAToolkit_ROOT=${CUDA_ROOT} -DCMAKE_DISABLE_FIND_PACKAGE_CLI11=ON
          -DCMAKE_DISABLE_FIND_PACKAGE_fmt=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
file(REMOVE_RECURSE ${WORK_DIR})
message(STATUS "${out}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the configure succeeded without CLI11 and fmt")
endif()
foreach(expected IN ITEMS "CLI11 (Debian/Ubuntu: libcli11-dev" "fmt (Debian/Ubuntu: libfmt-dev")
  string(FIND "${out}" "${expected}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the configure failed without naming '${expected}'")
  endif()
endforeach()
string(FIND "${out}" "nlohmann_json (" at)
if(NOT at EQUAL -1)
  message(FATAL_ERROR "nlohmann_json, which is installed, was named missing")
endif()
