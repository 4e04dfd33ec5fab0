# Runs a command and passes when it exits with EXPECT_RC and its output
# (stdout and stderr) matches EXPECT_REGEX. CTest's WILL_FAIL accepts any
# non-zero status; this pins the status and the message.
#   cmake -DCOMMAND=a|b|c -DEXPECT_RC=2 -DEXPECT_REGEX=... -P expect_exit.cmake
# COMMAND separates its arguments with '|' because add_test splits on ';'.
string(REPLACE "|" ";" command "${COMMAND}")
execute_process(COMMAND ${command} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'")
endif()
