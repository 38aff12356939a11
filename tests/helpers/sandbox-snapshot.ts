/** What the isolation batteries compare before and after their cases (sandbox-isolation, sandbox-sessions). */

/** Everything of the sandbox's state a call can look at, as JSON. */
export const SNAPSHOT = String.raw`
import ctypes, json, os, resource
libc = ctypes.CDLL(None, use_errno=True)
def tree(d):
    out = []
    for root, dirs, files in os.walk(d):
        out += [os.path.join(root, n) for n in dirs + files]
    return sorted(out)
def read(p):
    try:
        return open(p).read().strip()
    except OSError as e:
        return type(e).__name__
mq = libc.mq_open(b'/toolsmith-planted', os.O_RDONLY)
print(json.dumps({
    'procs': sorted(int(p) for p in os.listdir('/proc') if p.isdigit() and int(p) not in (1, os.getpid())),
    'pid': os.getpid(), 'cwd': os.getcwd(), 'cwd_mode': oct(os.stat('.').st_mode & 0o777), 'tmp_mode': oct(os.stat('/tmp').st_mode & 0o777),
    'tmp': tree('/tmp'), 'shm': tree('/dev/shm'),
    # The keys and name the IPC case plants: looked up, not created (-1 ENOENT when absent).
    'sysv': [libc.shmget(0x7031, 0, 0), libc.msgget(0x7032, 0), libc.semget(0x7033, 0, 0)],
    'mqueue': mq >= 0 or ctypes.get_errno(),
    'proc': sorted(os.listdir('/proc')),
    'sysctl': {k: read('/proc/sys/kernel/' + k) for k in ('shmmax', 'msgmnb', 'hostname')},
    'hostname': os.uname().nodename,
    'keys': read('/proc/keys'),
    'limits': {n: resource.getrlimit(getattr(resource, n)) for n in ('RLIMIT_NOFILE', 'RLIMIT_NPROC', 'RLIMIT_CPU', 'RLIMIT_AS', 'RLIMIT_FSIZE', 'RLIMIT_MSGQUEUE')},
    'init': read('/proc/1/comm'),
}, sort_keys=True))
`;
