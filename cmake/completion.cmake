# SPDX-License-Identifier: Apache-2.0
# Writes OUT, the bash completion script PROGRAM (the built greenctx) makes from its parser.
execute_process(COMMAND ${PROGRAM} completion bash OUTPUT_FILE ${OUT} RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "greenctx completion bash failed (${status})")
endif()
