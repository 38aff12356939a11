"""Privileges: the call's capabilities dropped and its seccomp filter loaded, so that what is left of the kernel's
surface is what a math tool needs.

Isolates: only the system calls the pool allows (syscall-allow.ts, measured) run; every other answers ENOSYS instead
of running, for the call and all it starts, and the refused ones (syscall-filter.ts) their errno; other
architectures' ABIs (x32, i386) are killed; the call holds no capability, not even in its bounding set, and cannot
gain one (no_new_privs). The zygote loads the allow list with the few calls it needs itself to build each call's
namespaces added (ZYGOTE_SYSCALLS), which every call inherits; each call then loads the small program that refuses
those (SYSCALL_FILTER): compiling a program once per zygote, not per call. Does not: choose the lists (the pool sends
them in the boot line), nor exist in unsafe mode (the pool then sends none).
"""
import ctypes
import errno
import tempfile

from zygote_os import LIBC, check

# The calls' own program (prepare); b'' when none. Read as zygote_seccomp.SYSCALL_FILTER.
SYSCALL_FILTER = b''


def prepare(boot):
    """Compile both programs from the pool's lists (boot: allowed, zygote_needs, refused, log_unlisted): sets
    SYSCALL_FILTER (the calls only the zygote needs, refused to each call) and returns the zygote's own (the allow
    list, loaded once by the zygote: load_syscall_filter). Without an allow list neither exists (unsafe mode), unless
    measuring from nothing (log_unlisted with an empty list: every call logged)."""
    global SYSCALL_FILTER
    allowed = set(boot.get('allowed') or [])
    if not allowed and not boot.get('log_unlisted'):
        return b''
    needs = set(boot.get('zygote_needs') or []) - allowed
    refused = boot.get('refused') or []
    # The zygote's needs that the refused list names (unshare, setns, mount) are refused to each call by its own
    # program, with the refused list's errno.
    SYSCALL_FILTER = build_refusing_filter(
        [r for r in refused if r['name'] in needs] +
        [{'name': n} for n in sorted(needs - {r['name'] for r in refused})])
    return build_allowing_filter(allowed | needs, [r for r in refused if r['name'] not in needs],
                                 bool(boot.get('log_unlisted')))


def _known(name):
    import seccomp
    return seccomp.resolve_syscall(seccomp.Arch.NATIVE, name) >= 0


def _add(f, action, r):
    import seccomp
    if 'arg0' in r:
        f.add_rule(action, r['name'], seccomp.Arg(0, seccomp.EQ, r['arg0']))
    elif 'arg0_not' in r:
        f.add_rule(action, r['name'], seccomp.Arg(0, seccomp.NE, r['arg0_not']))
    else:
        f.add_rule(action, r['name'])


def build_allowing_filter(allowed, refused, log_unlisted=False):
    """The zygote's program: the listed calls run, every other answers ENOSYS (as on a kernel without it, so that
    libraries fall back) — or, measuring (log_unlisted), runs and is logged by the kernel's audit
    (scripts/measure-syscalls.py reads those records). A refused entry with an argument condition (prlimit64 on
    another process, an AF_VSOCK socket) answers its errno for those arguments and runs for the others; a whole
    refused call is never allowed, whatever the allow list says. Other architectures' ABIs (x32, i386) are killed,
    by libseccomp's default."""
    import seccomp
    default = seccomp.LOG if log_unlisted else seccomp.ERRNO(errno.ENOSYS)
    f = seccomp.SyscallFilter(defaction=default)
    # A binary tree over the call numbers instead of a chain of ~200 comparisons: every system call pays for it.
    f.set_attr(seccomp.Attr.CTL_OPTIMIZE, 2)
    whole = {r['name'] for r in refused if 'arg0' not in r and 'arg0_not' not in r}
    partial = [r for r in refused if r['name'] not in whole]
    partial_names = {r['name'] for r in partial}
    for name in sorted(allowed - whole - partial_names):
        if _known(name):
            f.add_rule(seccomp.ALLOW, name)
    for r in refused:
        # Explicit, so that measuring (log_unlisted) still refuses them; libseccomp refuses a rule whose action is
        # the default's (EACCES), which then covers it.
        action = seccomp.ERRNO(getattr(errno, r.get('errno', 'ENOSYS')))
        if _known(r['name']) and action != default:
            _add(f, action, r)
    for r in partial:
        if not _known(r['name']):
            continue
        if r['name'] in allowed:  # the other arguments run
            flipped = {'name': r['name'], **({'arg0_not': r['arg0']} if 'arg0' in r else {'arg0': r['arg0_not']})}
            _add(f, seccomp.ALLOW, flipped)
    return _export(f)


def build_refusing_filter(refused):
    """The calls' own program: each listed call answers its errno (default ENOSYS); the rest fall through to the
    zygote's program beneath it. Each entry: {"name", "errno"?, "arg0"?, "arg0_not"?}."""
    import seccomp
    if not refused:
        return b''
    f = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for r in refused:
        if _known(r['name']):
            _add(f, seccomp.ERRNO(getattr(errno, r.get('errno', 'ENOSYS'))), r)
    return _export(f)


def _export(f):
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
