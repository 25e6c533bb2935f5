#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End-to-end tests of what vperf prints of a hostile recording (docs/report.md, "Strings from a
recording"): vt-hostile-rec writes one whose thread names, exec'd file, markers, mapped file,
kernel symbols and environment are terminal escapes (an OSC 52 that would write the analyst's
clipboard, CSI sequences), C1 controls, bidirectional overrides, a line separator, U+FFFE, U+FFFF
and invalid UTF-8.  Whatever vperf report, timeline, export and report --header print of it:

  text (tables, -x CSV, folded stacks, summaries, messages)  valid UTF-8 without a control
      character but the line feed, a C1 control, a bidirectional control or a line separator;
      the OSC 52 shown as "\\x1b]52;...";
  JSON (-j, --to chrome)  parses (strictly), holds the names whole, no raw control or noncharacter;
  SVG (timeline, flame graph)  parses as XML 1.0 (expat refuses what XML forbids).

Usage: hostile_tests.py --vperf PATH --gen PATH TEST
       hostile_tests.py --list

Each test_<name>() below is one ctest, cli.hostile_<name> (and cli.asan.hostile_<name> with the
ASan vperf; tests/integration/CMakeLists.txt).
Exit status: 0 pass, 1 fail, 77 skip (after printing "SKIP: <reason>").
"""

import json
import os
import re
import resource
import shlex
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import Skip, Fail, check  # noqa: E402,F401

VPERF = None
GEN = None
TMP = None

BAD = b"@BAD@"			# where vt-hostile-rec leaves room for invalid UTF-8
INVALID = b"\xff\xfe\x80\xc3\xed"	# five bytes of it, none a character
OSC52 = "\x1b]52;c;SGFja2Vk\x07"
# what no output may hold as itself: the bidirectional controls, the line and paragraph separators
FORMAT_CHARS = {0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x2066, 0x2067,
                0x2068, 0x2069, 0x2028, 0x2029}


def p(*parts):
    return os.path.join(TMP, *parts)


def run(args, timeout=60):
    """Run args in the test's directory: (status, stdout bytes, stderr bytes), shown escaped."""
    try:
        r = subprocess.run(args, capture_output=True, timeout=timeout, cwd=TMP)
    except subprocess.TimeoutExpired as e:
        raise Fail("timed out after %ds: %s" % (timeout, " ".join(map(shlex.quote, args)))) from e
    print("$ " + " ".join(shlex.quote(a) for a in args))
    for name, data in (("stdout", r.stdout), ("stderr", r.stderr)):
        if data:
            print("--- %s ---" % name)
            print(ascii(data[-4000:]))
    print("--- exit %d ---" % r.returncode, flush=True)
    return r.returncode, r.stdout, r.stderr


def vperf(*args, timeout=60):
    return run([VPERF] + list(args), timeout=timeout)


def recording(name="rec", files=()):
    """A hostile recording (mapping files too), its invalid UTF-8 put in: its directory."""
    d = p(name)
    status, _, err = run([GEN, d] + list(files))
    check(status == 0, "vt-hostile-rec failed: %r" % err)
    n = 0
    for f in os.listdir(d):
        if f == "metadata":
            continue
        with open(os.path.join(d, f), "rb") as fh:
            data = fh.read()
        n += data.count(BAD)
        with open(os.path.join(d, f), "wb") as fh:
            fh.write(data.replace(BAD, INVALID))
    check(n >= 3, "vt-hostile-rec left %d places for invalid UTF-8, expected 3 or more" % n)
    return d


def hostile_metadata(d):
    """Control characters in the metadata's environment values (report --header prints them)."""
    path = os.path.join(d, "metadata")
    with open(path, "rb") as f:
        data = f.read()
    check(b"HOSTILE" in data, "no HOSTILE placeholder in the metadata")
    with open(path, "wb") as f:
        f.write(data.replace(b"HOSTILE", OSC52.encode() + b"\x9b\xe2\x80\xae"))


def check_text(what, data, nonchars_ok=True, allow=""):
    """data (bytes) is text a terminal can show: valid UTF-8, nothing that acts on the terminal
    (but the line feed and what allow holds: a separator asked for)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Fail("%s: invalid UTF-8 at byte %d: %r" % (what, e.start, data[max(0, e.start - 40):
                                                                             e.start + 8]))
    for i, ch in enumerate(text):
        cp = ord(ch)
        if ((cp < 0x20 and ch != "\n" and ch not in allow) or 0x7f <= cp <= 0x9f or
                cp in FORMAT_CHARS or (not nonchars_ok and cp in (0xfffe, 0xffff))):
            raise Fail("%s: U+%04X as itself at character %d: %r" % (what, cp, i,
                                                                      text[max(0, i - 40):i + 8]))
    return text


def report(*args, allow=""):
    status, out, err = vperf("report", *args)
    check(status == 0, "vperf report %s exited %d" % (" ".join(args), status))
    check_text("report %s stderr" % " ".join(args), err)
    return check_text("report %s" % " ".join(args), out, allow=allow)


# ---- text ---------------------------------------------------------------------------------------

def test_report_tables_escape_every_name():
    d = recording()
    text = report("-i", d)
    check("\\x1b]52;c;SGFja2Vk\\x07osc" in text, "the OSC 52 thread name is not shown escaped")
    check("\\xe2\\x80\\xae" in text, "the right-to-left override is not shown escaped")
    check("\\x1b[31mred" in text, "the mapped file's escapes are not shown escaped")
    text = report("-i", d, "--sort", "pid,tid,comm,dso,symbol,layer", "-g", "caller")
    check("kfunc\\x1b[2J" in text, "the kernel symbol's escape is not shown escaped")
    check("\\xff\\xfe\\x80\\xc3\\xed" in text, "the invalid UTF-8 is not shown byte by byte")
    report("-i", d, "-g", "callee", "--sort", "symbol")
    for sep in (",", ";", "\t"):
        report("-i", d, "-x", sep, "--sort", "comm,dso,symbol", allow=sep)


def test_timeline_summary_and_folded_stacks_escape_every_name():
    d = recording()
    status, out, err = vperf("timeline", "-i", d, "-o", p("t.svg"))
    check(status == 0, "vperf timeline exited %d" % status)
    text = check_text("timeline's summary", out)
    check_text("timeline's stderr", err)
    check("\\x1b]52;c;" in text, "the summary does not show the OSC 52 name escaped")
    status, out, err = vperf("export", "-i", d, "--to", "folded", "-o", "-")
    check(status == 0, "vperf export --to folded exited %d" % status)
    text = check_text("folded stacks", out)
    for line in text.splitlines():
        check(line.rsplit(" ", 1)[-1].isdigit(), "a folded line without its count: %r" % line)


def test_header_escapes_the_environment():
    d = recording()
    hostile_metadata(d)
    status, out, err = vperf("report", "--header", "-i", d)
    check(status == 0, "vperf report --header exited %d" % status)
    text = check_text("report --header", out)
    check_text("report --header's stderr", err)
    check("\\x1b]52;c;" in text, "the header does not show the hostname's OSC 52 escaped")


def test_error_messages_escape_what_they_quote():
    # a recording directory with escapes in its name and a broken metadata file
    d = p("\x1b]52;c;SGFja2Vk\x07dir")
    os.mkdir(d)
    with open(os.path.join(d, "metadata"), "wb") as f:
        f.write(b"/* CTF 1.8 */ vperf_version \x1b[2J\x9b garbage {{{")
    for args in (["report", "-i", d], ["report", "--header", "-i", d],
                 ["timeline", "-i", d, "-o", p("x.svg")], ["export", "-i", d, "--to", "chrome",
                                                           "-o", "-"]):
        status, out, err = vperf(*args)
        check(status != 0, "vperf %s of a broken recording exited 0" % args[0])
        check_text("vperf %s's error" % args[0], err)
        check_text("vperf %s's output" % args[0], out)


def test_ctf_export_writes_the_names_as_text():
    # the CTF writer refuses invalid UTF-8, and babeltrace2 prints what the trace holds
    d = recording()
    status, _, err = vperf("export", "-i", d, "--to", "ctf", "-o", p("ctf"))
    check(status == 0, "vperf export --to ctf exited %d" % status)
    check_text("export --to ctf's stderr", err)
    bt2 = shutil.which("babeltrace2")
    if not bt2:
        raise Skip("babeltrace2 is not installed: the export was written, not read back")
    status, out, _ = run([bt2, p("ctf", "host")])
    check(status == 0, "babeltrace2 could not read the export")
    text = check_text("babeltrace2 of the export", out)
    check("sched_switch" in text and "\\x1b]52;c;" in text,
          "the export has no sched_switch with the OSC 52 name as text")


def test_named_files_that_are_not_regular_do_not_hang_the_report():
    # a FIFO would wait for a writer forever, /dev/zero never ends: both are refused at once
    fifo = p("fifo")
    os.mkfifo(fifo)
    os.symlink("/dev/zero", p("zero-link"))
    d = recording(files=[fifo, "/dev/zero", p("zero-link"), TMP, "/proc/self/exe"])
    for args in (["report", "-i", d], ["export", "-i", d, "--to", "folded", "-o", "-"],
                 ["timeline", "-i", d, "-o", p("t.svg")]):
        status, out, err = vperf(*args, timeout=20)
        check(status == 0, "vperf %s exited %d" % (args[0], status))
        check_text("vperf %s" % args[0], out)
    text = report("-i", d, "--sort", "dso,symbol")
    for name in ("fifo", "zero", "zero-link", "exe"):
        check(re.search(r"\[unknown\] in %s\b|%s +\[\.\] \[unknown\]" % (name, name), text),
              "%s is not an unknown frame of its own" % name)


def test_recording_files_that_are_not_regular_are_refused_at_once():
    # the recording's own metadata, and a VM recording's files list, as a FIFO or /dev/zero
    for name, how in (("fifo-meta", "fifo"), ("zero-meta", "zero")):
        d = recording(name)
        os.unlink(os.path.join(d, "metadata"))
        if how == "fifo":
            os.mkfifo(os.path.join(d, "metadata"))
        else:
            os.symlink("/dev/zero", os.path.join(d, "metadata"))
        for args in (["report", "-i", d], ["report", "--header", "-i", d],
                     ["timeline", "-i", d, "-o", p("t.svg")]):
            status, out, err = vperf(*args, timeout=20)
            check(status == 1, "vperf %s with a %s metadata exited %d" % (args[0], how, status))
            check(b"not a regular file" in err, "the error does not say why: %r" % err)
    d = recording("fifo-list")
    os.makedirs(os.path.join(d, ".raw", "guest"))
    os.mkfifo(os.path.join(d, ".raw", "guest", "files"))
    status, _, _ = vperf("report", "-i", d, timeout=20)
    check(status == 0, "vperf report with a FIFO for its files list exited %d" % status)


# ---- JSON ---------------------------------------------------------------------------------------

def check_json(what, data):
    check_text(what, data, nonchars_ok=False)
    try:
        return json.loads(data.decode("utf-8"))
    except ValueError as e:
        raise Fail("%s: not JSON: %s" % (what, e))


def strings_of(v):
    if isinstance(v, str):
        yield v
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings_of(x)
    elif isinstance(v, list):
        for x in v:
            yield from strings_of(x)


FINDINGS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus-report")
FUZZ_LAYERS = ("host_kernel", "vmm", "guest_kernel", "guest_user", "host_user")


def unpack_fuzz_input(path, d):
    """A fuzz-report input (tests/fuzz/fuzz-report.c: an options byte, then files, each a name
    byte, a u32 length and its bytes) written out as the recording that target reads."""
    with open(path, "rb") as f:
        data = f.read()
    os.makedirs(d)
    files, i = {}, 1
    while i + 5 <= len(data):
        name, n = data[i] % 22, int.from_bytes(data[i + 1:i + 5], "little")
        i += 5
        if i + n > len(data):
            break
        if name == 0:
            rel = "metadata"
        elif name == 21:
            rel = os.path.join(".raw", "guest", "files")
        else:
            rel = "%s_cpu%d" % (FUZZ_LAYERS[(name - 1) // 4], (name - 1) % 4)
        files[rel] = data[i:i + n]
        i += n
    for rel, body in files.items():
        os.makedirs(os.path.dirname(os.path.join(d, rel)) or d, exist_ok=True)
        with open(os.path.join(d, rel), "wb") as f:
            f.write(body)
    return d


def test_recordings_that_crash_babeltrace2_are_refused_with_a_reason():
    """babeltrace2 2.0.4's CTF decoder crashes, aborts or takes gigabytes on these (the fuzzer's
    findings, tests/fuzz/README.md; `babeltrace2 DIR` dies on them): vperf decodes a recording
    in a child process bounded in memory first, and refuses such a one with a reason, reading
    none of it: an error, no crash, and at most 2 GiB resident in any process."""
    names = sorted(f for f in os.listdir(FINDINGS) if f.startswith("regress-bt2-"))
    check(len(names) >= 4, "expected the 4 babeltrace2 findings in %s, found %r"
          % (FINDINGS, names))
    for name in names:
        d = unpack_fuzz_input(os.path.join(FINDINGS, name), p(name))
        for args in (("report", "-i", d),
                     ("export", "--to", "folded", "-i", d, "-o", d + ".folded"),
                     ("timeline", "-i", d, "-o", d + ".svg")):
            status, out, err = vperf(*args, timeout=120)
            check(status > 0, "vperf %s on %s: exit %d, expected an error and no crash"
                  % (args[0], name, status))
            text = check_text("%s stderr" % args[0], err)
            crashed = re.search(r"babeltrace2's CTF decoder (crashed on it|needs more than "
                                r"\d+ MiB)", text) and "none of it was read" in text
            refused = "babeltrace2 could not read it: " in text
            check(crashed or refused, "vperf %s on %s does not say why it refused it: %r"
                  % (args[0], name, text))
            check(not os.path.exists(args[-1]) or args[-1] == d,
                  "vperf %s left %s for a refused recording" % (args[0], args[-1]))
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    print("the largest resident set of vperf or its children: %d MiB" % (rss >> 20))
    check(rss < 2 << 30, "a process took %d MiB: the decoder's memory is not bounded" % (rss >> 20))


def test_report_json_parses_and_keeps_the_names_whole():
    d = recording()
    status, out, _ = vperf("report", "-i", d, "-j", "-g", "caller",
                           "--sort", "comm,dso,symbol,pid,tid")
    check(status == 0, "vperf report -j exited %d" % status)
    names = set(strings_of(check_json("report -j", out)))
    check(OSC52 + "osc" in names, "the OSC 52 thread name is not in the JSON whole")
    check(any("\uffff.so" in n for n in names), "U+FFFF did not survive as \\uffff")
    check(any("\ufffd" * 5 in n for n in names), "the invalid bytes are not U+FFFD each")


def test_chrome_export_parses_and_keeps_the_names_whole():
    d = recording()
    status, out, _ = vperf("export", "-i", d, "--to", "chrome", "-o", "-")
    check(status == 0, "vperf export --to chrome exited %d" % status)
    names = set(strings_of(check_json("export --to chrome", out)))
    check(OSC52 + "osc" in names, "the OSC 52 thread name is not in the JSON whole")
    check(any(n.startswith("mark\x1b]8;;") for n in names), "the marker's name is not whole")
    check(any("\ufffd" * 5 in n for n in names), "the invalid bytes are not U+FFFD each")


# ---- SVG ----------------------------------------------------------------------------------------

def check_svg(what, path):
    with open(path, "rb") as f:
        data = f.read()
    check_text(what, data, nonchars_ok=False)
    try:
        ET.fromstring(data)
    except ET.ParseError as e:
        raise Fail("%s: not XML: %s" % (what, e))


def test_svgs_parse_as_xml():
    d = recording()
    status, _, _ = vperf("timeline", "-i", d, "-o", p("t.svg"))
    check(status == 0, "vperf timeline exited %d" % status)
    check_svg("timeline", p("t.svg"))
    status, _, _ = vperf("export", "-i", d, "--to", "flame", "-o", p("f.svg"))
    check(status == 0, "vperf export --to flame exited %d" % status)
    check_svg("flame graph", p("f.svg"))
    status, _, _ = vperf("report", "-i", d, "--flame", "-o", p("r.svg"))
    check(status == 0, "vperf report --flame exited %d" % status)
    check_svg("report --flame", p("r.svg"))


def tests():
    return harness.tests_of(globals())


def setup(a, tmp):
    global VPERF, GEN, TMP
    VPERF, GEN, TMP = a.vperf, a.gen, tmp
    for what, path in (("vperf", VPERF), ("vt-hostile-rec", GEN)):
        if not path or not os.access(path, os.X_OK):
            return "the %s binary is not built: %r" % (what, path)
    VPERF, GEN = os.path.abspath(VPERF), os.path.abspath(GEN)
    return None


def main():
    return harness.main(tests(), "vperf-hostile-", setup, extra_args=("--gen",))


if __name__ == "__main__":
    sys.exit(main())
