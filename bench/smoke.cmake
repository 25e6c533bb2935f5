# bench.read_latency_smoke: read-latency runs, and its last line of output is
# one valid JSON object with the fields bench/README.md documents.  No
# timing is checked.  Also: a bad option exits 2.
#   cmake -DPROGRAM=<read-latency> -DPYTHON=<python3> -P smoke.cmake

execute_process(COMMAND ${PROGRAM} --rounds 3 --reads 2000
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("${out}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "read-latency exited ${rc}: ${err}")
endif()

set(json_file ${CMAKE_CURRENT_BINARY_DIR}/read-latency-smoke.out)
file(WRITE ${json_file} "${out}")
execute_process(COMMAND ${PYTHON} -c [[
import json, sys
lines = open(sys.argv[1]).read().splitlines()
d = json.loads(lines[-1])
assert d["bench"] == "read-latency", d
assert d["rounds"] == 3 and d["reads_per_round"] == 2000, d
for k in ("raw_read", "vperf_syscall", "papi_read", "clock_gettime",
          "bare_rdpmc", "vperf_rdpmc"):
    m = d["methods"][k]
    assert m["status"] in ("ok", "skipped", "error"), m
    assert (m["ns_per_read"] is None) == (m["status"] != "ok"), m
    assert m["status"] == "ok" or m["reason"], m
for k in ("vperf_syscall_vs_raw_read", "vperf_rdpmc_vs_bare_rdpmc",
          "vperf_vs_papi_read"):
    assert d["goals"][k]["result"] in ("PASS", "MISS", "SKIP"), d["goals"][k]
assert d["methods"]["raw_read"]["status"] == "ok"
assert d["methods"]["vperf_syscall"]["status"] == "ok"
print("smoke: JSON ok")
]] ${json_file} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the last line of read-latency's output is not the JSON it should be")
endif()

execute_process(COMMAND ${PROGRAM} --rounds 0
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "read-latency --rounds 0 exited ${rc}, want 2")
endif()
execute_process(COMMAND ${PROGRAM} --no-such-option
  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 2)
  message(FATAL_ERROR "read-latency --no-such-option exited ${rc}, want 2")
endif()
