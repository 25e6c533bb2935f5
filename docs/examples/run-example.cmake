# Run one documentation example: it must exit 0, and each of EXPECT0,
# EXPECT1, ... (CMake regular expressions) must match its standard output.
#   cmake -DPROGRAM=<path> -DEXPECT0=<regex> [-DEXPECT1=<regex> ...] -P run-example.cmake

execute_process(COMMAND ${PROGRAM}
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited ${rc}, want 0")
endif()
foreach(i RANGE 9)
  if(DEFINED EXPECT${i})
    if(NOT out MATCHES "${EXPECT${i}}")
      message(FATAL_ERROR "${PROGRAM}: no output line matches '${EXPECT${i}}'")
    endif()
  endif()
endforeach()
