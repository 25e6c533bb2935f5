#!/usr/bin/env bash
# bench/guest/run.sh VPERF GUEST-BENCH [ROUNDS]: vperf_guest.ko's costs inside a vperf-vmm guest, in one boot
# (`vperf vm run`; nested on hosts without hardware virtualization, about a minute).
#
# 1. Context switches: guest-bench switch (two threads on CPU 0 trading a token through pipes) in five states,
#    interleaved over ROUNDS rounds (default 5, each round starting with another state): the module not loaded,
#    loaded with the threads unmonitored (no context anywhere: the probe returns at its first load), the same
#    beside a monitored thread that sleeps (the probe looks both up at every switch, no hypercall), both threads
#    monitored on vcpu-clock (guest-accounted: no hypercall per switch), both monitored on exits (a SNAPSHOT
#    hypercall per switch). Figure: the median ns per trip. Goals: unmonitored <= 1.02 x not loaded, in both
#    unmonitored states; guest-accounted monitored <= 1.2 x unmonitored.
# 2. Reads (guest-bench reads): getppid(), a page read inlined (vperf_page_read) and through the library
#    (vperf_evset__read_one, page-only set), an exact read (doorbell or THREAD_READ + page), a read() of a guest perf
#    task-clock event. Goals: page read (inline) >= 10x cheaper than getppid(); an exact read costs one VM exit
#    (measured through the thread's own vperf::exits) and no guest system call (the doorbell path, docs/abi.md 7.1).
# Prints a table, then one line of JSON (the last line). Timings are ratios within this run: TCG is not hardware
# speed. Exit status 0 when it measured (goals met or not), else the guest run's status.
# VPERF_BENCH_TRIPS (default 5000 trips per state and round) and VPERF_BENCH_READS (2000 reads per block) size it.
set -uo pipefail
VPERF=${1:?usage: run.sh VPERF GUEST-BENCH [ROUNDS]}
BENCH=${2:?usage: run.sh VPERF GUEST-BENCH [ROUNDS]}
ROUNDS=${3:-5}
TRIPS=${VPERF_BENCH_TRIPS:-5000}
READS=${VPERF_BENCH_READS:-2000}
LOG=$(mktemp)
trap 'rm -f "$LOG"' EXIT

# shellcheck disable=SC2016 # expands in the guest
GUEST_CMD='
state() { # nomod | unmon | bystand | mon | monhc
	if [ $1 = nomod ]; then rmmod vperf_guest 2>/dev/null; else [ -e /dev/vperf ] || insmod /payload/vperf_guest.ko; fi
	case $1 in mon) o=--monitor ;; monhc) o="--monitor --event vperf::exits" ;; bystand) o=--bystander ;; *) o= ;; esac
	guest-bench switch $o --trips '"$TRIPS"' | sed "s/^/GB $1 /"
}
r=0
while [ $r -lt '"$ROUNDS"' ]; do
	set -- nomod unmon bystand mon monhc
	i=0
	while [ $i -lt $((r % 5)) ]; do set -- "$@" "$1"; shift; i=$((i + 1)); done	# each round starts elsewhere
	for s in "$@"; do state $s; done
	r=$((r + 1))
done
[ -e /dev/vperf ] || insmod /payload/vperf_guest.ko
guest-bench reads --reads '"$READS"' | sed "s/^/GB /"
exit 0'
"$VPERF" vm run --quiet --add "$BENCH:/payload/bin/guest-bench" -- "$GUEST_CMD" >"$LOG" 2>&1
st=$?
if [ "$st" != 0 ]; then
	cat "$LOG"
	echo "bench-guest: the guest run ended with status $st" >&2
	exit "$st"
fi
tr -d '\r' <"$LOG" | grep -a '^GB ' | python3 -c '
import json, statistics, sys
sw = {"nomod": [], "unmon": [], "bystand": [], "mon": [], "monhc": []}
rd = {}
for line in sys.stdin:
    f = line.split()
    if len(f) == 5 and f[2] == "switch" and f[3] == "ns_per_trip":
        sw[f[1]].append(float(f[4]))
    elif len(f) >= 4 and f[1] == "reads":
        rd[f[2]] = f[3] if len(f) == 4 else " ".join(f[3:])
missing = [k for k, v in sw.items() if not v]
if missing or "exact_read_ns" not in rd:
    sys.exit("bench-guest: the guest printed no figures for %s" % (missing or "reads"))
med = {k: statistics.median(v) for k, v in sw.items()}
unmon, bystand, mon = med["unmon"] / med["nomod"], med["bystand"] / med["nomod"], med["mon"] / med["nomod"]
# paired, as in the read-latency bench (bench/README.md): each state against the not-loaded trip of its own round
# (the same minute of this machine), the median of those ratios and their range: how far the noise reaches
pair = {k: sorted(x / y for x, y in zip(sw[k], sw["nomod"])) for k in ("unmon", "bystand", "mon", "monhc")}
ns = {m: float(rd[m + "_ns"]) for m in ("getppid", "page_inline", "page_read", "exact_read", "perf_read")}
cheaper = ns["getppid"] / ns["page_inline"]
cheaper_lib = ns["getppid"] / ns["page_read"]
epr = float(rd["exact_exits_per_read"])
print("context switch (ns per trip, 2 switches; median of %d rounds, min..max; x: ratio of medians; paired: median"
      " (range) of the ratio of each round to the not-loaded trip of that round)" % len(sw["nomod"]))
for k, label in (("nomod", "module not loaded"), ("unmon", "loaded, threads unmonitored"),
                 ("bystand", "unmonitored, a monitored bystander"),
                 ("mon", "both monitored: vcpu-clock (guest-accounted)"),
                 ("monhc", "both monitored: exits (a hypercall per switch)")):
    r = pair.get(k, [1.0])
    print("  %-32s %10.0f   %8.0f..%-8.0f x%.3f  paired x%.3f (x%.3f..x%.3f)" % (label, med[k], min(sw[k]),
          max(sw[k]), med[k] / med["nomod"], statistics.median(r), r[0], r[-1]))
verdict = "met" if max(unmon, bystand) <= 1.02 else "MISSED"
spread = max(pair[k][-1] - pair[k][0] for k in ("unmon", "bystand"))
if spread > 0.04:	# the rounds scatter by more than the 2% to be told apart: say so rather than judge
    verdict = "not judgeable here (%s on the medians; paired rounds scatter over %.0f%%)" % (verdict, spread * 100)
print("  goal: unmonitored <= 1.02 x not loaded: %s (%.3f; beside a monitored bystander %.3f)" %
      (verdict, unmon, bystand))
mon_unmon, monhc_unmon = med["mon"] / med["unmon"], med["monhc"] / med["unmon"]
print("  goal: monitored / unmonitored <= 1.2 where no exit is needed: %s (guest-accounted x%.3f; with a hypercall per "
      "switch x%.3f)" % ("met" if mon_unmon <= 1.2 else "MISSED", mon_unmon, monhc_unmon))
print("reads (ns per read, thread CPU time, median of rounds; read paths: page %s, exact %s, perf %s)" % (rd.get("path_page"), rd.get("path_exact"), rd.get("path_perf")))
for m in ("getppid", "page_inline", "page_read", "exact_read", "perf_read"):
    print("  %-12s %10.1f   %8s..%-8s exits in its blocks %s" % (m, ns[m], rd[m + "_min_ns"], rd[m + "_max_ns"], rd[m + "_exits"]))
print("  goal: page read >= 10x cheaper than getppid(): %s (%.1fx inline, vperf_page_read; %.1fx through vperf_evset__read_one)" %
      ("met" if cheaper >= 10 else "MISSED", cheaper, cheaper_lib))
print("  goal: an exact read costs one VM exit: %s (%.4f exits per read in its blocks, background included; other blocks: %s exits/ms)" % ("met" if 1 <= epr <= 1.01 else "MISSED", epr, rd.get("background_exits_per_ms")))
if rd.get("path_exact") == "doorbell":
    print("  goal: and no guest system call: met (read path doorbell: one load of the doorbell page; kmod-test proves it under seccomp strict mode)")
else:
    print("  goal: and no guest system call: MISSED (read path %s: THREAD_READ is an ioctl; this device has no doorbell)" % rd.get("path_exact"))
print(json.dumps({"bench": "guest", "switch_ns": med, "unmonitored_ratio": round(unmon, 4),
                  "bystander_ratio": round(bystand, 4), "monitored_ratio": round(mon, 4),
                  "monitored_vs_unmonitored": {"guest_accounted": round(mon_unmon, 4), "hypercall": round(monhc_unmon, 4)},
                  "paired_ratio": {k: round(statistics.median(v), 4) for k, v in pair.items()},
                  "read_ns": ns, "page_vs_getppid": round(cheaper, 2), "page_read_one_vs_getppid": round(cheaper_lib, 2), "exact_exits_per_read": epr,
                  "rounds": len(sw["nomod"]),
                  # for bench/suite: the paired ranges, and whether the switch goal can be judged (spread <= 4%)
                  "paired_range": {k: [round(v[0], 4), round(v[-1], 4)] for k, v in pair.items()},
                  "paired_spread": round(spread, 4), "switch_judgeable": spread <= 0.04,
                  "read_path": {"page": rd.get("path_page"), "exact": rd.get("path_exact"), "perf": rd.get("path_perf")}}))
'
