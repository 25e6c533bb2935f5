#!/usr/bin/env bash
# bench/trace/run.sh VPERF TRACE-BENCH [DIR]: what a trace event costs a guest thread, and how much of a guest's
# fastest output the recording keeps, in one recorded boot (`vperf vm record`; nested on hosts without hardware
# virtualization, a few minutes). The recording stays in DIR (default: a temporary directory, removed).
#
# 1. Cost (trace-bench cost, in the guest): N events per block, interleaved rounds, three ways in: a vperf marker
#    (vperf_trace_mark), a hypercall per event (hypertracing's design: a port write the VMM records as an exit),
#    a write() to tracefs's trace_marker. Per method: ns per event (guest CLOCK_MONOTONIC, median of rounds),
#    exits and system calls per event (the thread's own vperf::exits and raw_syscalls:sys_enter counts, less those
#    of an empty block). Goals: a marker makes 0 exits and 0 system calls; costs <= 0.25x a hypercall per event and
#    <= 0.5x a trace_marker write.
# 2. Drain (trace-bench drain): one thread makes markers for S seconds, first at the rate a hypercall per event
#    reaches at most (1 / its cost above), then as fast as it can. For each: produced (accepted by the marker
#    buffer), refused (the buffer full even after a flush), lost (dropped by the module: a full ring), and recorded
#    (markers of that name in the CTF trace, read with babeltrace2). Goals: 0 lost at the hypercall rate; above it
#    every marker accounted for: recorded + lost = produced.
# Prints a table, then one line of JSON (the last line). Timings are ratios within this run: TCG is not hardware
# speed. Exit status 0 when it measured (goals met or not), else the run's status.
# VPERF_BENCH_EVENTS (default 10000 per block), VPERF_BENCH_ROUNDS (5), VPERF_BENCH_DRAIN_S (10) size it;
# VPERF_BENCH_RECORD_MAX (MiB, default 2048) bounds the raw recording (a marker takes ~50 bytes of it: 10 s as fast
# as a nested guest can is ~500 MB; a recording cut short at the bound is said so, and its tail is unaccounted).
set -uo pipefail
VPERF=${1:?usage: run.sh VPERF TRACE-BENCH [DIR]}
BENCH=${2:?usage: run.sh VPERF TRACE-BENCH [DIR]}
EVENTS=${VPERF_BENCH_EVENTS:-10000}
ROUNDS=${VPERF_BENCH_ROUNDS:-5}
DRAIN_S=${VPERF_BENCH_DRAIN_S:-10}
PORT=0x5700
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
DIR=${3:-$WORK/rec}
command -v babeltrace2 >/dev/null || { echo "bench-trace: needs babeltrace2 (Debian: babeltrace2)" >&2; exit 1; }

# shellcheck disable=SC2016 # expands in the guest
GUEST_CMD='
export VPERF_MARK_KB=1024
trace-bench cost --events '"$EVENTS"' --rounds '"$ROUNDS"' --port '"$PORT"' >/tmp/cost || exit 1
sed "s/^/TB /" /tmp/cost
rate=$(sed -n "s/^result hypercall_rate //p" /tmp/cost)
trace-bench drain --seconds '"$DRAIN_S"' --rate "$rate" --name r | sed "s/^/TB /"
trace-bench drain --seconds '"$DRAIN_S"' --name f | sed "s/^/TB /"'
echo "bench-trace: vperf vm record -o $DIR (cost: $ROUNDS rounds of $EVENTS events per method; drain: 2 x $DRAIN_S s)" >&2
"$VPERF" vm record --timeout 900 --record-max "${VPERF_BENCH_RECORD_MAX:-2048}" -o "$DIR" --add "$BENCH:/payload/bin/trace-bench" -- "$GUEST_CMD" >"$WORK/out" 2>&1
st=$?
if [ "$st" != 0 ]; then
	cat "$WORK/out"
	echo "bench-trace: vperf vm record ended with status $st" >&2
	exit "$st"
fi
grep -a '^\[ vperf vm record\|^vperf vm record\|^TB ' "$WORK/out" >&2
# markers per name in the trace, as babeltrace2 reads it (its stderr: the discarded-event warnings)
babeltrace2 "$DIR" 2>"$WORK/bt.err" | grep -a ' marker: ' | grep -ao 'name = "[rf]"' | sort | uniq -c >"$WORK/counts"
btst=${PIPESTATUS[0]}
if [ "$btst" != 0 ]; then
	echo "bench-trace: babeltrace2 $DIR exited $btst: $(head -3 "$WORK/bt.err")" >&2
	exit 1
fi
tr -d '\r' <"$WORK/out" | grep -a '^TB ' | python3 -c '
import json, sys
res, drains = {}, {}
for line in sys.stdin:
    f = line.split()[1:]
    if f[:1] == ["result"] and len(f) == 8 and f[2] == "ns_per_event":
        res[f[1]] = {f[2]: float(f[3]), f[4]: float(f[5]), f[6]: float(f[7])}
    elif f[:1] == ["drain"]:
        drains[f[1]] = {f[i]: float(f[i + 1]) for i in range(2, len(f) - 1, 2)}
    elif f[:2] == ["cost", "events"]:
        exits_read = f[-1]
counts = {}
for line in open(sys.argv[1]):
    f = line.split()
    counts[f[-1].strip("\"")] = int(f[0])
if len(res) < 3 or set(drains) != {"r", "f"}:
    sys.exit("bench-trace: the guest printed no figures for %s" % ("cost" if len(res) < 3 else "the drains"))
m, h, t = res["marker"], res["hypercall"], res["trace_marker"]
vs_h, vs_t = m["ns_per_event"] / h["ns_per_event"], m["ns_per_event"] / t["ns_per_event"]
print("cost per event (guest ns, median of rounds, less an empty block; exits: the thread'"'"'s vperf::exits read %s;"
      " system calls: its raw_syscalls:sys_enter)" % exits_read)
for k, r in (("marker", m), ("hypercall", h), ("trace_marker", t)):
    print("  %-14s %10.1f ns   exits %.5f   system calls %.5f" % (k, r["ns_per_event"], r["exits_per_event"],
                                                                r["syscalls_per_event"]))
ok0 = m["exits_per_event"] < 0.0005 and m["syscalls_per_event"] < 0.0005
print("  goal: a marker makes 0 exits and 0 system calls: %s (%.5f, %.5f per event)" %
      ("met" if ok0 else "MISSED", m["exits_per_event"], m["syscalls_per_event"]))
print("  goal: marker <= 0.25x a hypercall per event: %s (%.3fx)" % ("met" if vs_h <= 0.25 else "MISSED", vs_h))
print("  goal: marker <= 0.5x a trace_marker write: %s (%.3fx)" % ("met" if vs_t <= 0.5 else "MISSED", vs_t))
out = {}
print("drain (one thread, markers for %.0f s; recorded: in the CTF trace)" % drains["r"]["seconds"])
for name, label in (("r", "at the hypercall rate"), ("f", "as fast as it can")):
    d = drains[name]
    rec = counts.get(name, 0)
    acc = d["produced"] - rec - d["lost"]
    out[name] = {"rate_goal": d["rate"], "seconds": d["seconds"], "produced": int(d["produced"]),
                 "refused": int(d["refused"]), "lost": int(d["lost"]), "recorded": rec,
                 "unaccounted": int(acc), "produced_per_s": round(d["produced"] / d["seconds"]),
                 "recorded_per_s": round(rec / d["seconds"])}
    print("  %-22s %9.0f/s produced %9d  refused %7d  lost %9d  recorded %9d  unaccounted %d" %
          (label, d["produced"] / d["seconds"], d["produced"], d["refused"], d["lost"], rec, acc))
r, f = out["r"], out["f"]
print("  goal: 0 lost at the hypercall rate: %s (%d lost, %d refused of %d)" %
      ("met" if r["lost"] == 0 and r["refused"] == 0 and r["unaccounted"] == 0 else "MISSED", r["lost"],
       r["refused"], r["produced"]))
print("  goal: above it, every marker accounted for: %s (recorded %d + lost %d = %d of %d produced)" %
      ("met" if f["unaccounted"] == 0 else "MISSED", f["recorded"], f["lost"], f["recorded"] + f["lost"],
       f["produced"]))
print(json.dumps({"bench": "trace", "cost": res, "marker_vs_hypercall": round(vs_h, 4),
                  "marker_vs_trace_marker": round(vs_t, 4), "exits_read": exits_read, "drain": out}))
' "$WORK/counts"
