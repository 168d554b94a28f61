# SPDX-License-Identifier: Apache-2.0
# Writes the code block that follows a marker line in a Markdown file to a source file, as printed,
# so that the example a reader copies is the one the build compiles. Fails when the marker or the
# block is missing. Rewrites OUTPUT only when the text changed.
#
#   cmake -DMARKDOWN=README.md -DMARKER="<!-- compiled as printed: ... -->" -DOUTPUT=x.cu -P this
include("${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake")
foreach(var IN ITEMS MARKDOWN MARKER OUTPUT)
  if(NOT DEFINED ${var} OR "${${var}}" STREQUAL "")
    message(FATAL_ERROR "extract_example.cmake: -D${var}=... is required")
  endif()
endforeach()
file(READ "${MARKDOWN}" text)
string(FIND "${text}" "${MARKER}" at)
if(at LESS 0)
  message(FATAL_ERROR "${MARKDOWN} has no line '${MARKER}' before the example to compile")
endif()
string(SUBSTRING "${text}" ${at} -1 text)
# The first fenced block after the marker: from the line after its opening ``` to the closing ```.
if(NOT text MATCHES "\n```[a-z+]*\n(.*)")
  message(FATAL_ERROR "${MARKDOWN}: no code block after '${MARKER}'")
endif()
set(text "${CMAKE_MATCH_1}")
string(FIND "${text}" "\n```" end)
if(end LESS 0)
  message(FATAL_ERROR "${MARKDOWN}: the code block after '${MARKER}' is not closed")
endif()
string(SUBSTRING "${text}" 0 ${end} code)
set(code "// Extracted from ${MARKDOWN} by cmake/extract_example.cmake: edit it there.\n${code}\n")
write_if_changed("${OUTPUT}" "${code}")
