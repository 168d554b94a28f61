# SPDX-License-Identifier: Apache-2.0
# Writes OUT, greenctx's man page, with HELP2MAN from PROGRAM's --help and --version, and a
# COMMANDS section holding each command's help (`greenctx help COMMAND`), so that the page says
# everything --help does.
execute_process(COMMAND ${PROGRAM} --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "greenctx --help failed (${status})")
endif()
# The commands are the lines of the Subcommands section, each "  NAME  description".
string(REGEX REPLACE ".*\nSubcommands:\n" "" commands "${help}")
string(REGEX MATCHALL "(^|\n)  [a-z][a-z-]*" names "${commands}")
set(include "[COMMANDS]\n")
foreach(name IN LISTS names)
  string(STRIP "${name}" name)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env COLUMNS=80 ${PROGRAM} help ${name}
                  OUTPUT_VARIABLE text RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "greenctx help ${name} failed (${status})")
  endif()
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}") # a line starting . or ' is text
  string(APPEND include ".SS greenctx ${name}\n.nf\n${text}.fi\n")
endforeach()
file(WRITE ${OUT}.include "${include}")
execute_process(COMMAND ${HELP2MAN} --no-info --no-discard-stderr --include ${OUT}.include
                        --name "partition a GPU's SMs with CUDA green contexts" --section 1
                        --output ${OUT} ${PROGRAM}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "help2man failed (${status})")
endif()
