#!/usr/bin/env python3
"""qemu-regs.py SOCKET [KTEXT]: every vCPU's registers from a QEMU monitor socket (for a guest that froze).
With KTEXT (the runtime address of the kernel's _text, which KASLR moves; /init prints it as VPERF-KTEXT), each
RIP in kernel text is also given as _text + offset: resolve it with the System.map of Debian's
linux-image-<version>-dbg package (the image's own System.map is a stub).
Exit status: 0, or 1 when the monitor did not answer."""
import re
import socket
import sys
import time


def ask(path, command, wait=3.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(wait)
    s.connect(path)
    out = b""
    try:
        out += s.recv(65536)  # the greeting and prompt
    except socket.timeout:
        pass
    s.sendall(command.encode() + b"\n")
    end = time.time() + wait
    while time.time() < end:
        try:
            chunk = s.recv(65536)
        except socket.timeout:
            break
        if not chunk:
            break
        out += chunk
    s.close()
    return out.decode(errors="replace")


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        text = ask(sys.argv[1], "info registers -a")
    except OSError as e:
        print(f"qemu-regs: monitor {sys.argv[1]}: {e}")
        return 1
    if "CPU#" in text:
        text = text[text.index("CPU#"):]  # not the monitor's greeting and line-editing echo
    print(text)
    ktext = int(sys.argv[2], 16) if len(sys.argv) == 3 else None
    for cpu, rip in re.findall(r"CPU#(\d+).*?RIP=([0-9a-f]{16})", text, re.S):
        off = int(rip, 16) - ktext if ktext is not None else -1
        where = f" = _text + {off:#x}" if 0 <= off < 0x4000000 else ""
        print(f"qemu-regs: CPU {cpu} RIP {rip}{where}")
    return 0 if "RIP=" in text else 1


if __name__ == "__main__":
    sys.exit(main())
