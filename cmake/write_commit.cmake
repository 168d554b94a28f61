# SPDX-License-Identifier: Apache-2.0
# Writes OUT, a C++ file defining greenctx::cli::build_commit(), with the commit the source tree
# SOURCE is at (git describe --always --dirty; "unknown" outside a git checkout, as in an sdist),
# and touches it only when that changed, so that a build without a new commit relinks nothing.
# Run at every build by the greenctx_commit target (tools/greenctx/CMakeLists.txt).
include("${CMAKE_CURRENT_LIST_DIR}/write_if_changed.cmake")
execute_process(COMMAND git describe --always --dirty
                WORKING_DIRECTORY "${SOURCE}"
                OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                RESULT_VARIABLE status ERROR_QUIET)
if(NOT status EQUAL 0 OR commit STREQUAL "")
  set(commit "unknown")
endif()
set(text "// Written by cmake/write_commit.cmake at build time.\n#include \"common/build_commit.hpp\"\n\nnamespace greenctx::cli {\nconst char *build_commit() noexcept { return \"${commit}\"; }\n} // namespace greenctx::cli\n")
write_if_changed("${OUT}" "${text}")
