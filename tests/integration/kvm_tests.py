#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of `vperf kvm record` (docs/kvm.md) on this host: the real binary attaches by
pid to idle-vmm (tests/workloads/idle-vmm.c), a KVM VMM with a real VM and real vCPUs on
/dev/kvm that never run them (this host's KVM cannot boot a guest), whose vCPU threads are named
as QEMU names them and which, with --shm, plays the guest of the shared-memory channel
(docs/abi.md 8): one ring per vCPU in a file, marker records written as vperf_guest.ko writes
them.  babeltrace2, the reference reader, reads every recording back.

Usage: kvm_tests.py --vperf PATH --workloads DIR TEST
       kvm_tests.py --list

Each test_<name>() below is one ctest, cli.kvm_<name> (tests/integration/CMakeLists.txt).
Exit status: 0 pass, 1 fail, 77 skip (after printing "SKIP: <reason>").
"""

import collections
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Skip, Fail, check  # noqa: E402,F401
from harness import vperf, refused, tmp_path as p  # noqa: E402

VPERF = None
WORKLOADS = None
BT2 = shutil.which("babeltrace2")


class Vmm:
    """idle-vmm running in the background: its pid, its vCPU threads' tids, its output."""

    def __init__(self, *args, wait_go=False):
        exe = os.path.join(WORKLOADS, "idle-vmm")
        if not os.path.exists(exe):
            raise Skip("idle-vmm was not built (x86-64 only)")
        self.proc = subprocess.Popen([exe] + list(args), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline()
        if first.startswith("SKIP:"):
            self.proc.wait()
            raise Skip("idle-vmm: " + first[5:].strip() + " (this host offers no KVM VM)")
        m = re.match(r"pid (\d+) vm (\d+)", first)
        if not m:
            self.proc.kill()
            raise Fail("idle-vmm did not start: %r %r" % (first, self.proc.stderr.read()))
        self.pid = int(m.group(1))
        self.tids = {}
        nr = int(args[args.index("--vcpus") + 1]) if "--vcpus" in args else 2
        for _ in range(nr):
            m = re.match(r"vcpu (\d+) tid (\d+)", self.proc.stdout.readline())
            check(m, "idle-vmm did not say its vCPU threads")
            self.tids[int(m.group(1))] = int(m.group(2))
        print("idle-vmm pid %d, vCPU threads %r" % (self.pid, self.tids))

    def go(self):
        self.proc.stdin.write("go\n")
        self.proc.stdin.flush()

    def finish(self, timeout=60):
        out, err = self.proc.communicate(timeout=timeout)
        check(self.proc.returncode == 0, "idle-vmm exited %d: %s" % (self.proc.returncode, err))
        rings = {int(c): (int(w), int(lost)) for c, w, lost in
                 re.findall(r"^cpu (\d+) written (\d+) lost (\d+)$", out, re.M)}
        print("idle-vmm rings (written, lost): %r" % rings)
        return rings

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


def need_root_tools():
    if os.geteuid() != 0:
        raise Skip("not root: vperf kvm record needs root for tracefs and debugfs")
    if not os.path.exists("/sys/kernel/debug/kvm"):
        raise Skip("debugfs is not mounted on /sys/kernel/debug (scripts/install-deps.sh mounts "
                   "it): no TSC offsets to check")


def env(d):
    """The recording's environment (CTF metadata): {key: value}."""
    with open(os.path.join(d, "metadata")) as f:
        text = f.read()
    m = re.search(r"env \{(.*?)\n\};", text, re.S)
    check(m, "no env block in the metadata")
    return dict(re.findall(r'^\s*([a-z0-9_]+) = "?(.*?)"?;$', m.group(1), re.M))


def bt2(d):
    """babeltrace2 DIR: its lines (it must read the whole recording)."""
    if not BT2:
        raise Skip("babeltrace2 is not installed (scripts/install-deps.sh installs it)")
    r = subprocess.run([BT2, d], capture_output=True, text=True, timeout=300)
    check(r.returncode == 0, "babeltrace2 exited %d: %s" % (r.returncode, r.stderr[-2000:]))
    return r.stdout.splitlines()


def record(pid, d, *extra, timeout=120):
    r = vperf("kvm", "record", "-p", str(pid), "-o", d, *extra, timeout=timeout)
    check(r.returncode == 0, "vperf kvm record exited %d" % r.returncode)
    return r


def test_record_finds_the_vcpus_and_names_their_threads():
    """The vCPUs from the VMM's descriptors, their threads from QEMU's names; each vCPU's TSC
    offset from debugfs; the recording ends after --duration and babeltrace2 reads it."""
    need_root_tools()
    vmm = Vmm("--vcpus", "3", "--seconds", "30")
    try:
        d = p("rec")
        r = record(vmm.pid, d, "--duration", "0.5")
    finally:
        vmm.kill()
    e = env(d)
    for i, tid in vmm.tids.items():
        check(e.get("vcpu%d_tid" % i) == str(tid), "vcpu%d_tid %r, the thread is %d"
              % (i, e.get("vcpu%d_tid" % i), tid))
    check("QEMU" in e.get("vcpu_threads", ""), "vcpu_threads: %r" % e.get("vcpu_threads"))
    check(e.get("vmm_pid") == str(vmm.pid) and e.get("vmm_comm") == "idle-vmm",
          "vmm_pid/vmm_comm: %r %r" % (e.get("vmm_pid"), e.get("vmm_comm")))
    check(e.get("nr_vcpus") == "3", "nr_vcpus %r" % e.get("nr_vcpus"))
    check(len(e.get("vcpu_tsc_offsets", "").split(",")) == 3 and "tsc_offsets" not in e,
          "TSC offsets not read: %r %r" % (e.get("vcpu_tsc_offsets"), e.get("tsc_offsets")))
    check("duration" in e.get("recording_end", ""), "recording_end %r" % e.get("recording_end"))
    check("3 vCPUs (3 threads named)" in r.stderr, "the summary does not count the vCPUs")
    bt2(d)
    check(os.stat(os.path.join(d, ".raw", "vmm.vraw")).st_mode & 0o077 == 0,
          "the raw recording is not private")


def test_record_ends_readable_when_the_vmm_exits():
    need_root_tools()
    vmm = Vmm("--vcpus", "1", "--seconds", "1")
    d = p("rec")
    t0 = time.time()
    r = record(vmm.pid, d)
    vmm.finish()
    print("recorded for %.2f s" % (time.time() - t0))
    check("ended: VMM exited" in r.stderr, "the summary does not say the VMM exited")
    e = env(d)
    check("exited" in e.get("recording_end", ""), "recording_end %r" % e.get("recording_end"))
    bt2(d)


def test_record_of_a_process_that_is_not_a_vmm_says_what_was_looked_for():
    d = p("rec")
    refused(["kvm", "record", "-p", str(os.getpid()), "-o", d],
            r"is not a KVM VMM: none of its descriptors .*\(anon_inode:kvm-vm\)", "not a VMM")
    check(not os.path.exists(d), "an output directory was made for nothing")


def test_record_of_no_such_process_and_bad_options_are_refused():
    pid = 4194304
    while os.path.exists("/proc/%d" % pid):
        pid -= 1
    refused(["kvm", "record", "-p", str(pid)], r"no process %d" % pid, "no such pid")
    refused(["kvm", "record"], r"-p PID is needed", "no pid")
    refused(["kvm", "record", "-p", "x1"], r"-p 'x1'", "a pid that is not a number")
    refused(["kvm", "record", "-p", "1", "--duration", "0"], r"--duration '0'", "duration 0")
    refused(["kvm", "record", "-p", "1", "--", "true"], r"takes no command", "a command")
    refused(["kvm", "frob"], r"'frob' is not a kvm command", "an unknown subcommand")


def markers(lines):
    """babeltrace2's marker events named tick: {tid: [value, ...]}."""
    got = collections.defaultdict(list)
    for line in lines:
        if " marker: " not in line or 'name = "tick"' not in line:
            continue
        m = re.search(r"value = (\d+),.*tid = (\d+)", line)
        check(m, "a marker line not understood: %r" % line)
        got[int(m.group(2))].append(int(m.group(1)))
    return got


def record_while_guest_writes(vmm, d, shm):
    """vperf kvm record --shm attached to vmm, then the guest's producers started; both to their
    end (the recorder's: the VMM's exit).  (the guest's rings {cpu: (written, lost)}, stderr)"""
    try:
        rec = subprocess.Popen([VPERF, "kvm", "record", "-p", str(vmm.pid), "-o", d, "--shm", shm],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(0.3)		# attached: the producers may start
        vmm.go()
        rings = vmm.finish()
        out, err = rec.communicate(timeout=120)
        print(err)
        check(rec.returncode == 0, "vperf kvm record exited %d" % rec.returncode)
    finally:
        vmm.kill()
    return rings, err


def test_shm_markers_all_arrive_in_order_with_their_values():
    """100 000 markers through the shared-memory channel, the guest waiting for room: every one
    arrives, in order on its thread, none lost, none refused."""
    need_root_tools()
    shm = p("vperf-shm")
    vmm = Vmm("--vcpus", "2", "--seconds", "0.2", "--shm", shm, "--markers", "50000",
              "--ring", "65536", "--paced")
    d = p("rec")
    rings, err = record_while_guest_writes(vmm, d, shm)
    check(rings == {0: (50000, 0), 1: (50000, 0)}, "the guest's rings: %r" % rings)
    got = markers(bt2(d))
    check(sorted(got) == sorted(vmm.tids.values()), "markers on threads %r, the vCPU threads "
          "are %r" % (sorted(got), sorted(vmm.tids.values())))
    for tid, vals in got.items():
        check(vals == list(range(50000)), "thread %d: %d markers, not 0..49999 in order"
              % (tid, len(vals)))
    e = env(d)
    check(e.get("summary_lost_guest_ring") == "0" and e.get("summary_guest_invalid_bytes") == "0",
          "losses: %r %r" % (e.get("summary_lost_guest_ring"), e.get("summary_guest_invalid_bytes")))
    check("100000 guest records" in err, "the summary does not count 100000 guest records")


def test_shm_ring_too_small_counts_its_losses_and_the_sum_holds():
    """A guest that does not wait drops what does not fit and counts it: the markers that
    arrive and the losses the recording reports add up to what it wrote."""
    need_root_tools()
    shm = p("vperf-shm")
    vmm = Vmm("--vcpus", "2", "--seconds", "0.2", "--shm", shm, "--markers", "20000",
              "--ring", "4096")
    d = p("rec")
    rings, err = record_while_guest_writes(vmm, d, shm)
    got = markers(bt2(d))
    arrived = sum(len(v) for v in got.values())
    written = sum(w for w, _ in rings.values())
    lost = sum(lost for _, lost in rings.values())
    check(written + lost == 40000, "the guest wrote %d and lost %d of 40000" % (written, lost))
    check(lost > 0, "a 4 KiB ring held 20000 markers: the test shows nothing")
    check(arrived == written, "%d markers arrived, the guest wrote %d" % (arrived, written))
    e = env(d)
    check(e.get("summary_lost_guest_ring") == str(lost), "the recording says %r lost, the guest "
          "%d" % (e.get("summary_lost_guest_ring"), lost))


def test_shm_file_of_a_wrong_size_or_kind_is_refused_before_recording():
    vmm = Vmm("--vcpus", "1", "--seconds", "30")
    try:
        small = p("small")
        with open(small, "wb") as f:
            f.write(b"\0" * 100)
        d = p("rec")
        refused(["kvm", "record", "-p", str(vmm.pid), "-o", d, "--shm", small],
                r"has 100 bytes: a vperf region has 64 KiB to 4 GiB", "a 100-byte file")
        check(not os.path.exists(d), "an output directory was made for nothing")
        refused(["kvm", "record", "-p", str(vmm.pid), "-o", d, "--shm", p()],
                r"not a regular file|cannot open", "a directory")
    finally:
        vmm.kill()


def test_shm_garbage_layout_is_counted_and_nothing_read_from_it():
    """A file a hostile guest filled with garbage: the layout is refused once and counted, no
    record is taken from it, and the recording is still whole."""
    need_root_tools()
    junk = p("junk")
    with open(junk, "wb") as f:
        f.write(bytes((i * 151 + 7) % 251 for i in range(1 << 20)))
    vmm = Vmm("--vcpus", "1", "--seconds", "30")
    try:
        d = p("rec")
        r = record(vmm.pid, d, "--shm", junk, "--duration", "0.3")
    finally:
        vmm.kill()
    check("0 guest records, 0 bytes refused, 0 ring headers refused, 1 layouts refused" in r.stderr,
          "the summary does not count one refused layout")
    bt2(d)


DOMAIN = """<domain type='kvm'>
  <name>vperf-doc-check</name>
  <memory unit='MiB'>1024</memory>
  <os><type arch='x86_64'>hvm</type></os>
  <devices>
%s
  </devices>
</domain>
"""


def test_libvirt_fragment_of_the_docs_is_a_valid_domain_device():
    """docs/vperf-kvm.md's <shmem> fragment, in a whole domain, passes virt-xml-validate (the
    libvirt schema); its file name is the one the QEMU command line beside it shares."""
    tool = shutil.which("virt-xml-validate")
    if not tool:
        raise Skip("virt-xml-validate is not installed (Debian libvirt-clients; "
                   "scripts/install-deps.sh installs it)")
    doc = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs",
                       "vperf-kvm.md")
    with open(doc) as f:
        text = f.read()
    m = re.search(r"```xml\n(<shmem name='([^']+)'>.*?</shmem>)\n```", text, re.S)
    check(m, "no <shmem> fragment in docs/vperf-kvm.md")
    check("mem-path=/dev/shm/%s," % m.group(2) in text, "the QEMU line shares another file")
    xml = p("domain.xml")
    with open(xml, "w") as f:
        f.write(DOMAIN % m.group(1))
    r = subprocess.run([tool, xml, "domain"], capture_output=True, text=True, timeout=60)
    print(r.stdout + r.stderr)
    check(r.returncode == 0, "virt-xml-validate refused the domain (exit %d)" % r.returncode)
    bad = p("bad.xml")
    with open(bad, "w") as f:
        f.write(DOMAIN % m.group(1).replace("ivshmem-plain", "ivshmem-frob"))
    r = subprocess.run([tool, bad, "domain"], capture_output=True, text=True, timeout=60)
    check(r.returncode != 0, "virt-xml-validate took an unknown model: it checks nothing")


def test_help_documents_the_options():
    r = vperf("kvm", "record", "--help")
    check(r.returncode == 0, "exit status %d" % r.returncode)
    for opt in ("--pid", "--output", "--shm", "--duration", "--no-host-events", "--raw-only"):
        check(opt in r.stdout, "kvm record --help lacks %s" % opt)
    r = vperf("help")
    check(re.search(r"^\s+kvm\s", r.stdout, re.M), "vperf help does not list kvm")


def tests():
    return harness.tests_of(globals())


def setup(a, tmp):
    global VPERF, WORKLOADS
    err = harness.cli_setup(a, tmp)
    VPERF, WORKLOADS = harness.CLI.vperf, harness.CLI.workloads
    return err


def main():
    return harness.main(tests(), "vperf-kvm-", setup, extra_args=("--workloads",))


if __name__ == "__main__":
    sys.exit(main())
