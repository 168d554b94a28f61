# SPDX-License-Identifier: Apache-2.0
# write_if_changed(PATH TEXT): writes TEXT to PATH unless PATH already holds it, so that a file
# generated at every build keeps its time stamp, and nothing that depends on it is rebuilt, while
# it does not change. Included by the scripts that generate files (write_commit.cmake,
# extract_example.cmake).
function(write_if_changed path text)
  set(old "")
  if(EXISTS "${path}")
    file(READ "${path}" old)
  endif()
  if(NOT old STREQUAL text)
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
