"""The run itself: plan the runs, execute them natively and in guests, keep every raw record.

Order (the run rules of METHOD.md): iteration by iteration; within an iteration the host-side modes of every
benchmark run first (native, native+count), then one guest boot runs every guest mode of every benchmark. Within a
benchmark the modes rotate by (iteration + benchmark index), so no mode always runs first or last and machine noise
hits all modes of one benchmark alike. Every finished run is appended to runs.jsonl at once (fsync'ed): a run that
is interrupted resumes where it stopped with `spec-harness run --resume DIR`.
"""

import datetime
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from . import results, verify

HOST_MODES = ("native", "native+count")
GUEST_MODES = ("guest", "guest+count", "guest+sample", "guest+record")
RECORD_SKIP = ("the cross-layer recorder (`vperf vm record`, issue 10) does not exist yet: "
               "guest+record cannot run until it lands")


def now_iso():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Progress:
    """One line on stderr: a bar, runs done of all, what runs now, and an ETA from the runs' own durations."""

    def __init__(self, total, done=0, stream=sys.stderr):
        self.total, self.done, self.stream = total, done, stream
        self.t0 = time.monotonic()
        self.done_here = 0
        self.tty = stream.isatty()

    def eta(self):
        if self.done_here == 0:
            return "ETA ?"
        per = (time.monotonic() - self.t0) / self.done_here
        left = int(per * (self.total - self.done))
        return "ETA %dm%02ds" % (left // 60, left % 60)

    def show(self, what, final=False):
        if not self.tty and not final:
            return	# a log gets one line per finished run
        width = 24
        fill = int(width * self.done / self.total) if self.total else width
        line = "[%s%s] %d/%d %s  %s" % ("#" * fill, "." * (width - fill), self.done, self.total, what,
                                        self.eta())
        if self.tty:
            self.stream.write("\r\033[K" + line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def step(self, what):
        self.done += 1
        self.done_here += 1
        self.show(what, final=True)

    def end(self):
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def mode_list(cfg):
    """The configured modes, guest+sample expanded to one mode per frequency (guest+sample@HZ)."""
    out = []
    for m in cfg.modes:
        if m == "guest+sample":
            out += ["guest+sample@%d" % hz for hz in cfg.sample_hz]
        else:
            out.append(m)
    return out


def base_mode(mode):
    return mode.split("@", 1)[0]


def plan(cfg):
    """Every run, in execution order: dicts with benchmark, mode, iteration, where ('host' or 'guest')."""
    modes = mode_list(cfg)
    host = [m for m in modes if base_mode(m) in HOST_MODES]
    guest = [m for m in modes if base_mode(m) in GUEST_MODES]
    runs = []
    for it in range(cfg.iterations):
        for where, ms in (("host", host), ("guest", guest)):
            for bi, b in enumerate(cfg.benchmarks):
                if not ms:
                    continue
                k = (it + bi) % len(ms)
                for m in ms[k:] + ms[:k]:
                    runs.append({"benchmark": b, "mode": m, "iteration": it, "where": where})
    for seq, r in enumerate(runs):
        r["seq"] = seq
    return runs


def run_key(r):
    return (r["benchmark"], r["mode"], r["iteration"])


def parse_kv_lines(text):
    """'word k=v k=v' lines (spec-run's and specbench's logs) -> list of (word, {k: v})."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        kv = {}
        for p in parts[1:]:
            if "=" in p:
                k, v = p.split("=", 1)
                kv[k] = v
        out.append((parts[0], kv))
    return out


def parse_stat_json(text):
    """`vperf stat -j --per-thread` lines -> {tid: {event: value in the event's unit}} and totals per event.

    Clock events come in msec; they are converted to ns so that every record carries clocks in ns."""
    per_tid, totals = {}, {}
    for line in text.splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        ev = row.get("event")
        val = row.get("counter-value")
        if ev is None or val is None:
            continue
        try:
            v = float(val)
        except ValueError:
            continue	# "<not counted>" and the like: not a value
        if row.get("unit") == "msec":
            v = int(round(v * 1e6))
        m = re.search(r"-(\d+)$", row.get("thread", ""))
        if m:
            per_tid.setdefault(int(m.group(1)), {})[ev] = v
        totals[ev] = totals.get(ev, 0) + v
    return per_tid, totals


def make_record(run, cfg, files, status_code, meta):
    """One run record from the files a run left: spec-run's log ('run'), the benchmark's thread log ('threads'),
    its output ('out') and vperf stat's JSON ('stat', count modes)."""
    rec = {"benchmark": run["benchmark"], "mode": run["mode"], "iteration": run["iteration"],
           "seq": run["seq"], "status": "ok", "reason": None, "elapsed_s": None, "wall_s": None,
           "cpu_s": None, "threads": [], "counts": {}, "samples": None, "samples_lost": None,
           "sample_hz": None, "verify": {"ok": False, "detail": "not verified"}, "started": run.get("started")}
    if base_mode(run["mode"]) == "guest+sample":
        rec["sample_hz"] = int(run["mode"].split("@")[1])
    runline = [kv for w, kv in parse_kv_lines(files.get("run", "")) if w == "run"]
    if runline:
        kv = runline[-1]
        rec["wall_s"] = int(kv.get("wall_ns", 0)) / 1e9
        rec["cpu_s"] = (int(kv.get("utime_ns", 0)) + int(kv.get("stime_ns", 0))) / 1e9
    per_tid, totals = parse_stat_json(files.get("stat", ""))
    rec["counts"] = totals
    nsamp = nlost = 0
    for w, kv in parse_kv_lines(files.get("threads", "")):
        if w == "thread":
            tid = int(kv.get("tid", -1))
            t = {"tid": tid, "comm": kv.get("comm", ""), "cpu_ns": int(kv.get("cpu_ns", 0)),
                 "samples": int(kv.get("samples", 0)), "lost": int(kv.get("lost", 0)),
                 "counts": per_tid.get(tid, {})}
            nsamp += t["samples"]
            nlost += t["lost"]
            rec["threads"].append(t)
        elif w == "bench":
            rec["elapsed_s"] = int(kv.get("elapsed_ns", 0)) / 1e9
    if rec["sample_hz"] is not None:
        rec["samples"], rec["samples_lost"] = nsamp, nlost

    if status_code != 0:
        rec["status"] = "error"
        rec["reason"] = "exit status %s%s" % (status_code, ": " + files["stderr"][-400:].strip()
                                              if files.get("stderr") else "")
    elif rec["elapsed_s"] is None:
        rec["status"] = "error"
        rec["reason"] = "the benchmark wrote no 'bench elapsed_ns=' line to its thread log"
    elif base_mode(run["mode"]).endswith("+count") and not rec["counts"]:
        rec["status"] = "error"
        rec["reason"] = "vperf stat printed no counts"
    ok, detail = verify.verify_output(files.get("out", ""), meta["expected"], meta["reltol"], meta["abstol"])
    rec["verify"] = {"ok": ok, "detail": detail}
    if rec["status"] == "ok" and not ok:
        rec["status"] = "verify-failed"
        rec["reason"] = detail
    return rec


def bench_cmd(run, cfg, meta, bindir, outdir, vperf):
    """argv (a list) of one run, and its environment additions; paths as seen where it runs."""
    b = run["benchmark"]
    mode = base_mode(run["mode"])
    argv = [os.path.join(bindir, b), "--size", cfg.size, "--threads", str(meta["threads"]),
            "--out", os.path.join(outdir, "out")]
    env = {"SPEC_THREAD_LOG": os.path.join(outdir, "threads")}
    if mode == "native+count":
        argv = [vperf, "stat", "-j", "--per-thread", "-o", os.path.join(outdir, "stat"),
                "-e", "task-clock", "--"] + argv
    elif mode == "guest+count":
        argv = [vperf, "stat", "-j", "--per-thread", "-o", os.path.join(outdir, "stat"),
                "-e", cfg.count_events, "--"] + argv
    elif mode == "guest+sample":
        hz = int(run["mode"].split("@")[1])
        env["SPEC_SAMPLE_PERIOD_NS"] = str(1000000000 // hz)
        env["SPEC_SAMPLE_EVENT"] = "vperf::vcpu-clock"
        env["SPEC_SAMPLE_FRAMES"] = str(cfg.sample_frames)
    return argv, env


class Runner:
    def __init__(self, cfg, root, build, outdir, metas, host, bindir=None, log=sys.stderr):
        self.cfg, self.root, self.build, self.outdir = cfg, root, build, outdir
        self.metas, self.host, self.log = metas, host, log
        self.runs_path = os.path.join(outdir, "runs.jsonl")
        self.bindir = bindir or os.path.join(build, "spec-harness", "bin")
        self.specrun = os.path.join(build, "spec-harness", "spec-run")
        self.vperf = os.path.join(build, "profiler", "vperf")

    def say(self, msg):
        self.log.write("spec-harness: %s\n" % msg)
        self.log.flush()

    def record(self, rec):
        results.append_run(self.runs_path, rec)
        if rec["status"] not in ("ok", "skipped"):
            self.say("%s %s iteration %d: %s: %s" % (rec["benchmark"], rec["mode"], rec["iteration"] + 1,
                                                      rec["status"].upper(), rec["reason"]))

    def skipped(self, run, reason):
        rec = make_record(run, self.cfg, {}, 0, {"expected": "", "reltol": 0, "abstol": 0})
        rec.update(status="skipped", reason=reason, verify={"ok": False, "detail": "not run"})
        return rec

    # ---- host side ----
    def run_host(self, run):
        meta = self.metas[run["benchmark"]]
        with tempfile.TemporaryDirectory(prefix="spec-run.") as d:
            argv, env = bench_cmd(run, self.cfg, meta, self.bindir, d, self.vperf)
            full_env = dict(os.environ, **env)
            run["started"] = now_iso()
            p = subprocess.run([self.specrun, "--log", os.path.join(d, "run"), "--"] + argv, env=full_env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               timeout=self.cfg.timeout)
            files = {"stderr": p.stderr}
            for name in ("run", "threads", "out", "stat"):
                path = os.path.join(d, name)
                if os.path.exists(path):
                    with open(path, errors="replace") as f:
                        files[name] = f.read()
            return make_record(run, self.cfg, files, p.returncode, meta)

    # ---- guest side ----
    def guest_script(self, runs):
        """A busybox sh script that executes the runs in order and prints each run's files between markers."""
        lines = ["#!/bin/sh", "# written by spec-harness: one iteration's guest runs",
                 "export LD_LIBRARY_PATH=/payload/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"]
        for r in runs:
            meta = self.metas[r["benchmark"]]
            argv, env = bench_cmd(r, self.cfg, meta, "/payload/spec/bin", "/tmp/sr", "vperf")
            envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in env.items())
            cmd = " ".join(shlex.quote(a) for a in argv)
            lines += [
                "rm -rf /tmp/sr; mkdir -p /tmp/sr",
                "echo 'SPEC-BEGIN %d'" % r["seq"],
                "%s /payload/spec/spec-run --log /tmp/sr/run -- %s </dev/null >/dev/null 2>/tmp/sr/stderr"
                % (envs, cmd),
                "st=$?",
                "for f in run threads out stat stderr; do [ -f /tmp/sr/$f ] || continue; "
                "echo \"SPEC-FILE $f\"; cat /tmp/sr/$f; echo; done",
                "echo \"SPEC-END %d $st\"" % r["seq"],
            ]
        lines.append("exit 0")
        return "\n".join(lines) + "\n"

    def run_guest_batch(self, runs, progress):
        """One guest boot for these runs; records each as its SPEC-END arrives. Returns the records."""
        by_seq = {r["seq"]: r for r in runs}
        recs = []
        with tempfile.TemporaryDirectory(prefix="spec-guest.") as d:
            script = os.path.join(d, "plan.sh")
            with open(script, "w") as f:
                f.write(self.guest_script(runs))
            os.chmod(script, 0o755)
            cmd = [self.vperf, "vm", "run", "--vcpus", str(self.cfg.vcpus), "--timeout", str(self.cfg.timeout),
                   "--add", self.bindir + ":/payload/spec/bin", "--add", self.specrun + ":/payload/spec/spec-run",
                   "--add", script + ":/payload/spec/plan.sh", "--", "sh /payload/spec/plan.sh"]
            logpath = os.path.join(self.outdir, "guest-iteration-%d.log" % (runs[0]["iteration"] + 1))
            self.say("booting the guest for iteration %d (%d runs; log %s)" % (runs[0]["iteration"] + 1,
                                                                                 len(runs), logpath))
            with open(logpath, "a") as logf:
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     errors="replace", stdin=subprocess.DEVNULL)
                try:
                    self._read_guest(p, logf, by_seq, recs, progress)
                except BaseException:
                    # a stop (Ctrl-C, SIGTERM, SIGHUP) or a bug here: the guest must not outlive this run
                    stop_child(p)
                    raise
                st = p.wait()
            if st != 0 or len(recs) != len(runs):
                done = {r["seq"] for r in recs}
                missing = [r for r in runs if r["seq"] not in done]
                raise GuestError("the guest run ended with status %d after %d of %d runs (see %s)%s" % (
                    st, len(recs), len(runs), logpath,
                    "; not run: " + ", ".join("%s %s" % (r["benchmark"], r["mode"]) for r in missing[:6])
                    if missing else ""))
        return recs

    def _read_guest(self, p, logf, by_seq, recs, progress):
        """Records each run of the guest's output as its SPEC-END arrives."""
        cur, files, fname = None, {}, None
        for raw in p.stdout:
            logf.write(raw)
            line = raw.rstrip("\r\n").replace("\r", "")
            if re.match(r"^run-nested: (waiting for|still waiting for|took) .*qemu\.lock", line):
                self.say(line)      # a wait for another run's guest is said where the user looks, not only logged
            m = re.match(r"^SPEC-BEGIN (\d+)$", line)
            if m:
                cur, files, fname = by_seq.get(int(m.group(1))), {}, None
                if cur is not None:
                    cur["started"] = now_iso()
                    progress.show("%s %s (iteration %d, in the guest)" % (
                        cur["benchmark"], cur["mode"], cur["iteration"] + 1))
                continue
            m = re.match(r"^SPEC-END (\d+) (\d+)$", line)
            if m and cur is not None and int(m.group(1)) == cur["seq"]:
                # each file was followed by one echo: drop that line
                files = {k: v[:-1] if v.endswith("\n\n") else v for k, v in files.items()}
                rec = make_record(cur, self.cfg, files, int(m.group(2)), self.metas[cur["benchmark"]])
                self.record(rec)
                recs.append(rec)
                progress.step("%s %s done" % (cur["benchmark"], cur["mode"]))
                cur = None
                continue
            m = re.match(r"^SPEC-FILE (\w+)$", line)
            if m and cur is not None:
                fname = m.group(1)
                files[fname] = ""
                continue
            if cur is not None and fname is not None:
                files[fname] += line + "\n"

    def execute(self, todo, done_count, total):
        progress = Progress(total, done_count)
        progress.show("starting")
        i = 0
        try:
            while i < len(todo):
                r = todo[i]
                if r["where"] == "host":
                    progress.show("%s %s (iteration %d)" % (r["benchmark"], r["mode"], r["iteration"] + 1))
                    self.record(self.run_host(r))
                    progress.step("%s %s done" % (r["benchmark"], r["mode"]))
                    i += 1
                else:
                    # one guest boot for every guest run of this iteration; guest+record is skipped
                    j = i
                    while (j < len(todo) and todo[j]["where"] == "guest"
                           and todo[j]["iteration"] == r["iteration"]):
                        j += 1
                    batch = []
                    for g in todo[i:j]:
                        if base_mode(g["mode"]) == "guest+record":
                            self.record(self.skipped(g, RECORD_SKIP))
                            progress.step("%s %s skipped" % (g["benchmark"], g["mode"]))
                        else:
                            batch.append(g)
                    if batch:
                        self.run_guest_batch(batch, progress)
                    i = j
        finally:
            progress.end()


def stop_child(p, grace=30):
    """End child p (a `vperf vm run`, which ends its guest on SIGTERM) and wait for it: TERM, then KILL."""
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 5)):
        if p.poll() is not None:
            return
        try:
            p.send_signal(sig)
            p.wait(wait)
            return
        except subprocess.TimeoutExpired:
            pass


def stop_on_signals():
    """SIGTERM and SIGHUP stop a run as Ctrl-C does (KeyboardInterrupt), so that its guest is ended too."""
    def handler(signum, frame):
        raise KeyboardInterrupt("signal %d" % signum)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, handler)


class GuestError(Exception):
    pass


def host_info(build):
    """What the machine is: the summary judges goals with it (a nested stack is not hardware speed)."""
    info = {"kernel": os.uname().release, "machine": os.uname().machine, "nproc": os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
            f.seek(0)
            flags = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        flags = ""
    hw_virt = (" vmx" in flags or " svm" in flags) and os.access("/dev/kvm", os.W_OK)
    info["virt_mode"] = "direct" if hw_virt else "nested"
    vperf = os.path.join(build, "profiler", "vperf")
    p = subprocess.run([vperf, "stat", "-x,", "-e", "instructions", "--", "true"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    info["hardware_pmu"] = p.returncode == 0
    if p.returncode != 0:
        info["hardware_pmu_why"] = p.stderr.strip().splitlines()[0] if p.stderr.strip() else "instructions does not count"
    info["python"] = sys.version.split()[0]
    return info


def which_or(path, name):
    return path if os.path.exists(path) else shutil.which(name)
