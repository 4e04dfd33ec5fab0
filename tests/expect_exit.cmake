# Runs a command and passes when it exits with EXPECT_RC and its output
# (stdout and stderr) matches EXPECT_REGEX. CTest's WILL_FAIL accepts any
# non-zero status, and PASS_REGULAR_EXPRESSION ignores the status; this pins
# both the status and the message.
#   cmake -DCOMMAND=a|b|c -DEXPECT_RC=2 -DEXPECT_REGEX=... [-DEXPECT_COUNT=2]
#         [-DEXPECT_LINE=...] -P expect_exit.cmake
# COMMAND separates its arguments with '|' because add_test splits on ';'.
# EXPECT_COUNT: EXPECT_REGEX must match exactly this many times (e.g. once per
# MPI rank). EXPECT_LINE: one whole line of the output must match this regex
# (anchored at both ends), so a pattern cannot straddle two lines.
string(REPLACE "|" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}")
endif()
if(DEFINED EXPECT_REGEX)
  if(NOT "${out}${err}" MATCHES "${EXPECT_REGEX}")
    message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'")
  endif()
  if(DEFINED EXPECT_COUNT)
    string(REGEX MATCHALL "${EXPECT_REGEX}" hits "${out}${err}")
    list(LENGTH hits n)
    if(NOT n EQUAL EXPECT_COUNT)
      message(FATAL_ERROR "'${EXPECT_REGEX}' matches ${n} times, expected ${EXPECT_COUNT}")
    endif()
  endif()
endif()
if(DEFINED EXPECT_LINE)
  # Lines as a list: protect the list separator first.
  string(REPLACE ";" "," text "${out}${err}")
  string(REPLACE "\n" ";" lines "${text}")
  set(found FALSE)
  foreach(line IN LISTS lines)
    if(line MATCHES "^${EXPECT_LINE}$")
      set(found TRUE)
    endif()
  endforeach()
  if(NOT found)
    message(FATAL_ERROR "no line matches '^${EXPECT_LINE}$'")
  endif()
endif()
