"""Privileges: the call's capabilities dropped and its seccomp filter loaded, so that what is left of the kernel's
surface is what a math tool needs.

Isolates: every system call the pool refuses (syscall-filter.ts) answers its errno instead of running, for the call
and all it starts; other architectures' ABIs (x32, i386) are killed; the call holds no capability, not even in its
bounding set, and cannot gain one (no_new_privs). The zygote loads the filter for all refused calls but the three it
needs itself to build each call's namespaces (ZYGOTE_NEEDS), which every call inherits; each call then loads the
small program that refuses those three (SYSCALL_FILTER): loading a filter costs a call its compilation. Does not:
choose the list (the pool sends it in the boot line), nor exist in unsafe mode (the pool then sends none).
"""
import ctypes
import errno
import tempfile

from zygote_os import LIBC, check

ZYGOTE_NEEDS = {'unshare', 'setns', 'mount'}
# The calls' own program (prepare); b'' when none. Read as zygote_seccomp.SYSCALL_FILTER.
SYSCALL_FILTER = b''


def prepare(refused):
    """Compile both programs from the pool's list: sets SYSCALL_FILTER (the three calls the zygote needs, for each
    call) and returns the zygote's own (the rest, loaded once by the zygote: load_syscall_filter)."""
    global SYSCALL_FILTER
    zygote_filter = build_syscall_filter([r for r in refused if r['name'] not in ZYGOTE_NEEDS])
    SYSCALL_FILTER = build_syscall_filter([r for r in refused if r['name'] in ZYGOTE_NEEDS])
    return zygote_filter

def build_syscall_filter(refused):
    """The calls' seccomp program, compiled once per zygote by libseccomp (python3-seccomp): every listed call
    answers its errno instead of running; the rest are allowed; other architectures' ABIs (x32, i386) are killed, by
    libseccomp's default. Each entry: {"name", "errno"?, "arg0"?: value the first argument must equal}."""
    if not refused:
        return b''
    import seccomp
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for r in refused:
        if seccomp.resolve_syscall(seccomp.Arch.NATIVE, r['name']) < 0:
            continue  # not a call on this architecture
        action = seccomp.ERRNO(getattr(errno, r.get('errno', 'ENOSYS')))
        if 'arg0' in r:
            f.add_rule(action, r['name'], seccomp.Arg(0, seccomp.EQ, r['arg0']))
        elif 'arg0_not' in r:
            f.add_rule(action, r['name'], seccomp.Arg(0, seccomp.NE, r['arg0_not']))
        else:
            f.add_rule(action, r['name'])
    with tempfile.TemporaryFile() as t:
        f.export_bpf(t)
        t.seek(0)
        return t.read()


class SockFprog(ctypes.Structure):
    _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]


def load_syscall_filter(program):
    """Install the precompiled program on this process (and all it starts): no_new_privs first, as the kernel asks."""
    check(LIBC.prctl(38, 1, 0, 0, 0), 'PR_SET_NO_NEW_PRIVS')
    buf = ctypes.create_string_buffer(program, len(program))
    prog = SockFprog(len(program) // 8, ctypes.addressof(buf))
    check(LIBC.prctl(22, 2, ctypes.byref(prog), 0, 0), 'PR_SET_SECCOMP')  # SECCOMP_MODE_FILTER


def drop_capabilities():
    """The zygote holds CAP_SYS_ADMIN in its user namespace to build each call's namespaces (and CAP_SETPCAP to drop
    it from the bounding set here); the code holds nothing, not even in its bounding set."""
    for cap in (21, 8):  # CAP_SYS_ADMIN, then CAP_SETPCAP (which the first drop needs): out of the bounding set
        check(LIBC.prctl(24, cap, 0, 0, 0), 'PR_CAPBSET_DROP')
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    check(LIBC.capset(header, (ctypes.c_uint32 * 6)()), 'capset')


def lock_down_call():
    """In the call's process, last before its code: no capability, and the calls' filter on top of the zygote's."""
    drop_capabilities()
    if SYSCALL_FILTER:
        load_syscall_filter(SYSCALL_FILTER)
