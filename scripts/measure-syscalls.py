#!/usr/bin/python3
"""Measure the system calls sandboxed code makes that the allow list (workers/sandbox/syscall-allow.ts) lacks.

Usage (as root): /usr/bin/python3 scripts/measure-syscalls.py [--from-nothing] -- COMMAND...
  e.g.  -- npm test -- tests/integration/sandbox-*.test.ts

--from-nothing logs every call (an empty allow list: the refused calls still refused), which measures the list
itself; without it, only what the list lacks.

Runs COMMAND with TOOLSMITH_SANDBOX_SECCOMP_LOG=1, which makes every pool it starts load the zygote's filter with
"log" instead of ENOSYS as its default action: an unlisted call then runs, and the kernel's audit writes a record of
it (type 1326, AUDIT_SECCOMP). This script takes the kernel's audit stream for the command's length (it registers
itself as the audit daemon over netlink, with no rate limit, so that the kernel's printk limit of 10 records per
5 s does not drop any) and prints each unlisted call once with how often it was made and by what, for sandbox
uids only (the pools' uids start at 100000). An empty list means the allow list covered everything COMMAND did.
Exit status: COMMAND's.
"""
import os
import re
import select
import socket
import struct
import subprocess
import sys

NETLINK_AUDIT = 9
AUDIT_SET = 1001
AUDIT_SECCOMP = 1326
AUDIT_STATUS_ENABLED, AUDIT_STATUS_PID, AUDIT_STATUS_RATE_LIMIT, AUDIT_STATUS_BACKLOG_LIMIT = 1, 4, 8, 16
NLM_F_REQUEST, NLM_F_ACK = 1, 4
SANDBOX_UID_FLOOR = 100000


def audit_set(sock, pid):
    """Become (pid) or stop being (0) the audit daemon: no rate limit, a deep backlog."""
    mask = AUDIT_STATUS_ENABLED | AUDIT_STATUS_PID | AUDIT_STATUS_RATE_LIMIT | AUDIT_STATUS_BACKLOG_LIMIT
    status = struct.pack('=10I', mask, 1, 0, pid, 0, 65536, 0, 0, 0, 0)
    sock.send(struct.pack('=IHHII', 16 + len(status), AUDIT_SET, NLM_F_REQUEST | NLM_F_ACK, 1, 0) + status)


def records(data):
    while len(data) >= 16:
        length, kind, _, _, _ = struct.unpack('=IHHII', data[:16])
        yield kind, data[16:length].decode('utf8', 'replace')
        data = data[(length + 3) & ~3:]


def main():
    if '--' not in sys.argv or os.geteuid() != 0:
        sys.exit('usage (as root): /usr/bin/python3 scripts/measure-syscalls.py -- COMMAND...')
    command = sys.argv[sys.argv.index('--') + 1:]
    import seccomp  # python3-seccomp: numbers to names
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_AUDIT)
    sock.bind((0, 0))
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 24)
    audit_set(sock, os.getpid())
    seen = {}
    mode = 'all' if '--from-nothing' in sys.argv[:sys.argv.index('--')] else '1'
    child = subprocess.Popen(command, env={**os.environ, 'TOOLSMITH_SANDBOX_SECCOMP_LOG': mode})
    try:
        while True:
            done = child.poll() is not None
            ready, _, _ = select.select([sock], [], [], 0.2)
            if not ready:
                if done:
                    break
                continue
            for kind, text in records(sock.recv(1 << 20)):
                if kind != AUDIT_SECCOMP:
                    continue
                fields = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', text))
                if int(fields.get('uid', '0')) < SANDBOX_UID_FLOOR:
                    continue
                nr = int(fields['syscall'])
                entry = seen.setdefault(nr, [0, set()])
                entry[0] += 1
                entry[1].add(fields.get('comm', '?').strip('"'))
    finally:
        audit_set(sock, 0)
        if child.poll() is None:
            child.kill()
    for nr, (count, comms) in sorted(seen.items(), key=lambda kv: -kv[1][0]):
        name = seccomp.resolve_syscall(seccomp.Arch.NATIVE, nr).decode()
        print('%-24s %8d  %s' % (name, count, ', '.join(sorted(comms))))
    print('%d %s system call(s)' % (len(seen), 'logged' if mode == 'all' else 'unlisted'), file=sys.stderr)
    sys.exit(child.returncode)


if __name__ == '__main__':
    main()
