# vperf_add_fuzzer(NAME SECONDS TEST SOURCES ... [MAX_LEN n] [INCLUDES ...] [LINK ...] [DEPENDS ...]
#                  [REPLAY_ONLY])
#
# One libFuzzer target (hv/core/fuzz/README.md): libFuzzer needs clang, whatever compiler builds the
# rest, so the target is compiled by a custom command, with ASan and UBSan (-fno-sanitize-recover:
# undefined behaviour is a crash), into ${CMAKE_CURRENT_BINARY_DIR}/fuzz-NAME.  With BUILD_TESTING,
# ctest test TEST (label fuzz) runs it for SECONDS from the seeds in corpus-NAME/ next to the
# sources (corpus/ for NAME hypercall), writing what it finds to the build folder's corpus-NAME/;
# the folder's fixture test vperf_fuzz_corpus_dirs() creates those.  REPLAY_ONLY: the ctest only runs
# the seeds (-runs=0), for a target whose open findings (README) mutation reaches within seconds.
function(vperf_add_fuzzer name seconds test)
  cmake_parse_arguments(F "REPLAY_ONLY" "MAX_LEN" "SOURCES;INCLUDES;LINK;DEPENDS" ${ARGN})
  if(NOT F_MAX_LEN)
    set(F_MAX_LEN 4096)	# an operation stream: a few hundred operations
  endif()
  set(bin ${CMAKE_CURRENT_BINARY_DIR}/fuzz-${name})
  set(includes)
  foreach(dir IN LISTS F_INCLUDES)
    list(APPEND includes -I${dir})
  endforeach()
  add_custom_command(OUTPUT ${bin}
    COMMAND ${VPERF_CLANG} -g -O1 -std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wshadow
            -Wstrict-prototypes -Wmissing-prototypes -Wno-unused-parameter -Werror
            -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
            ${includes} -I${PFM_INCLUDE_DIR} ${F_SOURCES} ${PFM_LIBRARY} -lpthread ${F_LINK} -o ${bin}
    DEPENDS ${F_SOURCES} ${F_DEPENDS}
    COMMENT "Building the ${name} fuzzer (clang, ASan, UBSan)")
  add_custom_target(fuzz-${name} ALL DEPENDS ${bin})
  if(BUILD_TESTING)
    if(name STREQUAL "hypercall")
      set(seeds ${CMAKE_CURRENT_SOURCE_DIR}/corpus)
      set(found ${CMAKE_CURRENT_BINARY_DIR}/corpus)
    else()
      set(seeds ${CMAKE_CURRENT_SOURCE_DIR}/corpus-${name})
      set(found ${CMAKE_CURRENT_BINARY_DIR}/corpus-${name})
    endif()
    set(how -max_total_time=${seconds})
    if(F_REPLAY_ONLY)
      set(how -runs=0)
    endif()
    add_test(NAME ${test}
      COMMAND ${CMAKE_COMMAND} -E env ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1
              ${bin} ${how} -max_len=${F_MAX_LEN} -timeout=10 -print_final_stats=1
              ${found} ${seeds})
    set_tests_properties(${test} PROPERTIES LABELS fuzz TIMEOUT 300
      FIXTURES_REQUIRED fuzz_corpus_${name})
    set_property(DIRECTORY APPEND PROPERTY VPERF_FUZZ_CORPUS_DIRS ${found})
    set_property(DIRECTORY APPEND PROPERTY VPERF_FUZZ_NAMES ${name})
  endif()
endfunction()

# After the folder's vperf_add_fuzzer() calls: one test that creates their corpus folders.
function(vperf_fuzz_corpus_dirs test)
  if(NOT BUILD_TESTING)
    return()
  endif()
  get_property(dirs DIRECTORY PROPERTY VPERF_FUZZ_CORPUS_DIRS)
  get_property(names DIRECTORY PROPERTY VPERF_FUZZ_NAMES)
  set(fixtures)
  foreach(name IN LISTS names)
    list(APPEND fixtures fuzz_corpus_${name})
  endforeach()
  add_test(NAME ${test} COMMAND ${CMAKE_COMMAND} -E make_directory ${dirs})
  set_tests_properties(${test} PROPERTIES FIXTURES_SETUP "${fixtures}" LABELS fuzz)
endfunction()
