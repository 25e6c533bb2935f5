#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of `vperf vm record` without a VM: its options, and what it does around the
VM runner, with a fake runner (VPERF_VM_RUNNER) standing in for tests/vm/vm-run.sh.  The real
runner, nested, is tested by tests/vm (vm.record_*).

Usage: vm_record_tests.py --vperf PATH TEST
       vm_record_tests.py --list

Each test_<name>() below is one ctest, cli.vm_record_<name> (tests/integration/CMakeLists.txt).
Exit status: 0 pass, 1 fail, 77 skip (after printing "SKIP: <reason>").
"""

import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Skip, Fail, check  # noqa: E402,F401

VPERF = None
TMP = None

# The fake runner: prints its arguments ("ARGS a b c"), leaves a marker that it ran, writes the
# --record file as FAKE_RAW says (valid: a minimal raw recording, header and END chunk; garbage;
# none), exits FAKE_STATUS.  With FAKE_WAIT it first waits for SIGTERM (a stop: vm-run.sh's trap
# brings the recording back and vperf-vmm exits 143).
FAKE_RUNNER = r'''#!/usr/bin/env python3
import os, signal, struct, sys
a = sys.argv[1:]
rec = a[a.index("--record") + 1] if "--record" in a else None

def write():
    kind = os.environ.get("FAKE_RAW", "valid")
    if not rec or kind == "none":
        return
    with open(rec, "wb") as f:
        if kind == "garbage":
            f.write(b"this is not a raw recording\n" * 8)
            return
        # struct vperf_rawrec_header (hv/include/vperf/rawrec.h): 1 vCPU, 1 GHz TSC
        f.write(b"VPERFRAW" + struct.pack("<IIQIIQQQQQ", 72, 1, 1000000, 1, 0, 1000,
                                          1700000000000000000, 1000, 0, 0))
        # a VPERF_RAWREC_END chunk
        f.write(struct.pack("<IIII", 12, 16, 0, 0) + struct.pack("<QQ", 2000, 2000))

# SIGTERM is blocked before saying it runs and then waited for: a handler around time.sleep() loses a
# signal that lands between the interpreter's last check and the sleep's system call (CPython runs
# handlers between bytecodes), and the runner then sleeps on.
if os.environ.get("FAKE_WAIT"):
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
print("ARGS " + " ".join(a), flush=True)
open(os.environ["FAKE_MARKER"], "w").close()
if os.environ.get("FAKE_WAIT"):
    if signal.sigtimedwait({signal.SIGTERM}, 30):
        write()
        sys.exit(143)
    sys.exit(99)
write()
sys.exit(int(os.environ.get("FAKE_STATUS", "7")))
'''


def show(args, r_stdout, r_stderr, rc):
    print("$ " + " ".join(shlex.quote(a) for a in args))
    for name, text in (("stdout", r_stdout), ("stderr", r_stderr)):
        if text:
            print("--- %s ---" % name)
            print(text.rstrip("\n"))
    print("--- exit %d ---" % rc, flush=True)


def fake_env(**kw):
    path = os.path.join(TMP, "fake-vm-run.py")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(FAKE_RUNNER)
        os.chmod(path, 0o755)
    env = dict(os.environ, VPERF_VM_RUNNER=path, FAKE_MARKER=os.path.join(TMP, "ran"))
    for k in ("FAKE_RAW", "FAKE_STATUS", "FAKE_WAIT"):
        env.pop(k, None)
    env.update({k: str(v) for k, v in kw.items()})
    return env


def record(*args, env=None, timeout=30):
    cmd = [VPERF, "vm", "record"] + list(args)
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=TMP,
                           env=env or fake_env())
    except subprocess.TimeoutExpired as e:
        raise Fail("timed out after %ds" % timeout) from e
    show(cmd, r.stdout, r.stderr, r.returncode)
    return r


def runner_args(r):
    lines = [l for l in r.stdout.splitlines() if l.startswith("ARGS ")]
    check(len(lines) == 1, "the runner did not run exactly once: %r" % r.stdout)
    return lines[0][len("ARGS "):].split(" ")


def ran():
    return os.path.exists(os.path.join(TMP, "ran"))


def p(*parts):
    return os.path.join(TMP, *parts)


def no_ctf_writer(r):
    return "built without the CTF writer" in r.stderr


# ---- help and option errors: a clear message, status 129, no runner, no directory ----------------

def test_help_exits_0_and_documents_its_options():
    r = record("--help")
    check(r.returncode == 0, "exit status %d" % r.returncode)
    for opt in ("-o, --output", "--no-host-events", "--raw-only", "--record-max", "--kernel-map", "--vcpus", "--mem",
                "--add", "--timeout", "--mode", "--no-vperf", "vperf.data"):
        check(opt in r.stdout, "--help does not mention %s" % opt)
    check(not ran(), "--help ran the runner")


def test_vm_help_lists_record():
    cmd = [VPERF, "vm", "--help"]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=10)
    show(cmd, r.stdout, r.stderr, r.returncode)
    check(r.returncode == 0 and "record" in r.stdout, "vm --help does not list record")


def bad(args, must_mention):
    r = record(*args)
    check(r.returncode == 129, "exit status %d, expected 129 (usage)" % r.returncode)
    for m in must_mention:
        check(m in r.stderr, "stderr does not mention %r" % m)
    check("Traceback" not in r.stderr, "a crash")
    check(not ran(), "the runner ran although the input was bad")
    check(not os.path.exists(p("vperf.data")), "vperf.data was created for bad input")
    return r


def test_missing_command_rejected():
    bad([], ["no command"])


def test_missing_command_after_options_rejected():
    bad(["-o", "rec", "--raw-only"], ["no command"])
    check(not os.path.exists(p("rec")), "-o rec was created without a command")


def test_empty_output_rejected():
    bad(["-o", "", "--", "true"], ["-o"])


def test_output_in_missing_directory_rejected():
    bad(["-o", "/nonexistent/dir/rec", "--", "true"], ["/nonexistent/dir/rec", "/nonexistent/dir"])


def test_output_dot_rejected():
    bad(["-o", ".", "--", "true"], ["-o '.'"])


def test_output_without_argument_rejected():
    bad(["-o"], ["-o"])


def test_record_max_zero_rejected():
    bad(["--record-max", "0", "--", "true"], ["--record-max"])


def test_kernel_map_missing_or_a_directory_rejected():
    bad(["--kernel-map", p("no-such-map"), "--", "true"], ["--kernel-map", "No such file"])
    bad(["--kernel-map", TMP, "--", "true"], ["--kernel-map", "not a readable file"])


def test_sampling_options_refused_when_bad_before_anything_runs():
    bad(["-e", "cpu-clock;reboot", "--", "true"], ["-e", "one guest perf event name"])
    bad(["-e", "cpu-clock,task-clock", "--", "true"], ["-e"])
    bad(["-F", "0", "--", "true"], ["-F"])
    bad(["-F", "100", "-c", "1000", "--", "true"], ["not both"])
    bad(["--no-vperf", "-g", "--", "true"], ["--no-vperf"])


def test_sampling_options_wrap_the_command_for_the_guest_sampler():
    r = record("--raw-only", "-o", "rec", "-F", "500", "-g", "--", "echo 'a b'", "x")
    check(r.returncode == 7, "exit status %d, expected the runner's 7" % r.returncode)
    lines = [l for l in r.stdout.splitlines() if l.startswith("ARGS ")]
    check(len(lines) == 1, "the runner did not run exactly once")
    want = "-- vperf record --into-host -q -F 500 -g -- sh -c 'echo '\\''a b'\\'' x'"
    check(lines[0].endswith(want), "the guest command is not wrapped as %r: %r" % (want, lines[0]))


def test_long_sampling_values_wrap_whole():
    # -c and -F are checked as numbers, so 600 leading zeros pass and are passed on as given: the
    # wrapped command must hold them whole (it once overflowed its buffer by their length)
    for opt, value in (("-c", "0" * 600 + "1"), ("-F", "0" * 700 + "99")):
        for cmd in (["true"], ["x" * 300, "'" * 100]):
            r = record("--raw-only", "-o", "rec", "-e", "e" * 255, opt, value, "-g", "--", *cmd)
            check(r.returncode == 7, "%s of %d characters: exit status %d, expected the "
                  "runner's 7" % (opt, len(value), r.returncode))
            args = " ".join(runner_args(r))
            quoted = " ".join(cmd).replace("'", "'\\''")
            want = ("-- vperf record --into-host -q -e %s %s %s -g -- sh -c '%s'" %
                    ("e" * 255, opt, value, quoted))
            check(args.endswith(want), "%s of %d characters: the guest command is not wrapped "
                  "whole: %r" % (opt, len(value), args[-200:]))


def test_bad_vm_run_option_rejected_like_vm_run():
    bad(["--vcpus", "99", "--", "true"], ["--vcpus"])


# ---- around the runner -------------------------------------------------------------------------

def test_runner_gets_record_guest_trace_options_and_command():
    r = record("--vcpus", "2", "--raw-only", "-o", "rec", "--", "vperf-demo", "-x")
    check(r.returncode == 7, "exit status %d, expected the runner's (the guest's) 7" % r.returncode)
    args = runner_args(r)
    check(args[:2] == ["--vcpus", "2"], "vm run's options not passed first: %r" % args)
    check(args[-3:] == ["--", "vperf-demo", "-x"], "the command is not passed as is: %r" % args)
    check("--record" in args and args[args.index("--record") + 1] == "rec/.raw/vmm.vraw",
          "not --record rec/.raw/vmm.vraw: %r" % args)
    check("--guest-trace" in args, "no --guest-trace: %r" % args)
    check("--vperf" in args and os.path.samefile(args[args.index("--vperf") + 1], VPERF),
          "the runner is not given this vperf: %r" % args)
    check(os.path.getsize(p("rec", ".raw", "vmm.vraw")) > 0, "the raw recording is not in rec/.raw")
    check("Captured and wrote" in r.stderr, "no summary: %r" % r.stderr)


def test_no_host_events_and_record_max_reach_the_runner():
    r = record("--no-host-events", "--record-max", "64", "--raw-only", "--", "true")
    args = runner_args(r)
    check(" ".join(args).find("--vmm-arg --no-host-events") >= 0, "no --vmm-arg --no-host-events: %r"
          % args)
    check(" ".join(args).find("--record-max 64") >= 0, "no --record-max 64: %r" % args)


def test_kernel_map_reaches_the_runner():
    m = p("System.map")
    with open(m, "w") as f:
        f.write("ffffffff81000000 T _stext\n")
    r = record("--kernel-map", m, "--raw-only", "--", "true")
    args = runner_args(r)
    check(" ".join(args).find("--kernel-map " + m) >= 0, "no --kernel-map %s: %r" % (m, args))


def test_no_vperf_means_no_guest_trace():
    r = record("--no-vperf", "--raw-only", "--", "true")
    args = runner_args(r)
    check("--guest-trace" not in args and "--vperf" not in args, "--no-vperf: %r" % args)
    check("no guest trace" in r.stderr, "--no-vperf does not say what it leaves out")


def test_existing_output_becomes_old_and_old_is_replaced():
    os.makedirs(p("vperf.data", ".raw"))
    open(p("vperf.data", "first"), "w").close()
    open(p("vperf.data", "metadata"), "w").close()
    record("--raw-only", "--", "true")
    check(os.path.exists(p("vperf.data.old", "first")), "the first recording is not vperf.data.old")
    r = record("--raw-only", "--", "true")
    check(r.returncode == 7, "exit status %d" % r.returncode)
    check(not os.path.exists(p("vperf.data.old", "first")), "vperf.data.old was not replaced")
    check(os.path.exists(p("vperf.data.old", ".raw", "vmm.vraw")), "the second run's old is not there")


def test_old_that_is_not_a_recording_is_left_alone():
    os.makedirs(p("rec"))
    os.makedirs(p("rec.old"))
    open(p("rec.old", "precious"), "w").close()
    r = record("-o", "rec", "--raw-only", "--", "true")
    check(r.returncode != 0, "exit status 0")
    check("rec.old" in r.stderr and "not a vperf recording" in r.stderr, "no clear message")
    check(os.path.exists(p("rec.old", "precious")), "rec.old's file was removed")
    check(not ran(), "the runner ran")


def test_no_recording_back_is_an_error():
    r = record("-o", "rec", "--", "true", env=fake_env(FAKE_RAW="none", FAKE_STATUS=0))
    check(r.returncode != 0, "exit status 0 without a recording")
    check("no recording" in r.stderr, "no clear message: %r" % r.stderr)


def test_conversion_failure_is_an_error_and_keeps_the_raw_file():
    r = record("-o", "rec", "--", "true", env=fake_env(FAKE_RAW="garbage", FAKE_STATUS=0))
    if no_ctf_writer(r):
        raise Skip("this vperf was built without the CTF writer (libbabeltrace-ctf)")
    check(r.returncode != 0, "exit status 0 after a failed conversion")
    check("convert" in r.stderr and "rec/.raw/vmm.vraw" in r.stderr, "no clear message: %r"
          % r.stderr)
    check(os.path.getsize(p("rec", ".raw", "vmm.vraw")) > 0, "the raw recording is gone")


def test_minimal_recording_converts_and_babeltrace2_reads_it():
    r = record("-o", "rec", "--", "true", env=fake_env(FAKE_RAW="valid", FAKE_STATUS=5))
    if no_ctf_writer(r):
        raise Skip("this vperf was built without the CTF writer (libbabeltrace-ctf)")
    check(r.returncode == 5, "exit status %d, expected the guest's 5" % r.returncode)
    check(os.path.exists(p("rec", "metadata")), "no CTF metadata in rec")
    check(os.path.exists(p("rec", ".raw", "vmm.vraw")), "the raw recording is not kept in rec/.raw")
    for what in ("events", "lost", "Captured and wrote"):
        check(what in r.stderr, "the summary does not say %r" % what)
    bt = shutil.which("babeltrace2")
    if not bt:
        raise Skip("converted; babeltrace2 is not installed to read it")
    cmd = [bt, p("rec")]
    b = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    show(cmd, b.stdout, b.stderr, b.returncode)
    check(b.returncode == 0 and not b.stderr.strip(), "babeltrace2 does not read rec cleanly "
          "(with the raw recording in rec/.raw)")


def report(*args):
    cmd = [VPERF, "report"] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=TMP)
    show(cmd, r.stdout, r.stderr, r.returncode)
    return r


def test_report_header_describes_the_converted_recording():
    r = record("-o", "rec", "--", "true", env=fake_env(FAKE_RAW="valid", FAKE_STATUS=0))
    if no_ctf_writer(r):
        raise Skip("this vperf was built without the CTF writer (libbabeltrace-ctf)")
    h = report("--header", "-i", "rec")
    check(h.returncode == 0, "vperf report --header exited %d" % h.returncode)
    for what in ("# recording: rec", "# layers:", "# duration:", "# clock mapping:", "# lost:",
                 "# vmm exits: 0"):
        check(what in h.stdout, "the header does not say %r" % what)
    # the default input is vperf.data, as perf's perf.data
    d = report("--header")
    check(d.returncode == 1 and "vperf.data" in d.stderr, "no vperf.data: not an error naming it")


def test_report_without_header_or_with_a_non_recording_is_an_error():
    # without --header, report reads the samples (docs/report.md): here there is no vperf.data
    r = report()
    check(r.returncode == 1 and "vperf.data: no such directory" in r.stderr,
          "vperf report without a recording: not an error naming vperf.data")
    os.mkdir(p("notrec"))
    with open(p("notrec", "metadata"), "w") as f:
        f.write("/* CTF 1.8 */\ntrace { major = 1; minor = 8; };\n")
    r = report("--header", "-i", "notrec")
    check(r.returncode == 1 and "notrec" in r.stderr, "a CTF trace without vperf's env: not an error")
    r = report("--header", "-i", "")
    check(r.returncode == 129, "an empty -i: not a usage error")


def test_ctrl_c_stops_the_runner_and_keeps_the_recording():
    cmd = [VPERF, "vm", "record", "-o", "rec", "--raw-only", "--", "sleep", "100"]
    print("$ " + " ".join(cmd), flush=True)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=TMP,
                            env=fake_env(FAKE_WAIT=1))
    line = proc.stdout.readline()	# the runner started
    check(line.startswith("ARGS "), "the runner did not start: %r" % line)
    t0 = time.monotonic()
    os.kill(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise Fail("vperf vm record did not stop the runner within 20 s of SIGINT")
    show(cmd, line + out, err, proc.returncode)
    check(time.monotonic() - t0 < 10, "stopping took %.1f s" % (time.monotonic() - t0))
    check(proc.returncode == 130, "exit status %d, expected 130 (SIGINT)" % proc.returncode)
    check(os.path.getsize(p("rec", ".raw", "vmm.vraw")) > 0, "what was recorded is gone")
    check("Captured and wrote" in err, "no summary after the stop")


def tests():
    return {n[len("test_"):]: f for n, f in sorted(globals().items())
            if n.startswith("test_") and callable(f)}


def setup(a, tmp):
    global VPERF, TMP
    VPERF, TMP = a.vperf, tmp
    if not VPERF or not os.access(VPERF, os.X_OK):
        return "the vperf binary is not built: %r" % VPERF
    VPERF = os.path.abspath(VPERF)
    return None


def main():
    return harness.main(tests(), "vperf-vm-record-", setup)


if __name__ == "__main__":
    sys.exit(main())
