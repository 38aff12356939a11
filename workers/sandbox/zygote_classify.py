"""Classify: a supervised call's result, from what the zygote saw (its limit status, wait status, output, and the
code's own error report), in the protocol's fields.

Isolates: the result from the code's claims: the error report on the info pipe is the code's to write too, so it
is kept only when the process ended as an uncaught exception ends it and every field has the contract's type and
bounds (error_info); a limit the zygote enforced always wins over it. Does not: touch any process (zygote_supervise
has cleaned up before this runs, so a bug here cannot leave a call's processes behind).
"""
import json
import os
import re
import signal

QUEUE_TIMEOUT = {'type': 'QueueTimeout', 'message': 'the call waited past its deadline and was not run'}
ERROR_TYPE = re.compile(r'[A-Za-z_][A-Za-z0-9_.]{0,99}\Z')


def error_info(raw, exit_code):
    """The code's report of its own uncaught exception (run_child writes it on fd 3). The code can write that pipe
    as well, so the report is untrusted: kept only when the process ended as an uncaught exception ends it (exit
    code 1) and every field has the result contract's type and bounds; anything else counts as no report."""
    if exit_code != 1 or not raw:
        return {}
    try:
        info = json.loads(raw.decode('utf-8', 'strict'))
    except ValueError:
        return {}
    if not isinstance(info, dict) or set(info) != {'type', 'line', 'message'}:
        return {}
    t, line, message = info['type'], info['line'], info['message']
    if not isinstance(t, str) or not ERROR_TYPE.match(t):
        return {}
    if line is not None and (type(line) is not int or not 1 <= line <= 10 ** 7):
        return {}
    if not isinstance(message, str) or len(message) > 2000:
        return {}
    return {'type': t, 'line': line, 'message': message}


def classify(run, timeout, mem_limit):
    """The result of a supervised call, from its limit status, wait status, output and error info. A limit the
    zygote enforced (timeout, memory, output_limit) wins, then the cgroup's OOM killer (memory); otherwise the exit
    says it: 0 ok; a MemoryError (or a segfault that printed one) memory; SIGXCPU timeout; SIGXFSZ an error; 120
    internal (set-up failed); else error, named after the signal when the code reported nothing itself."""
    status = run.status
    exit_code = None
    sig = None
    if os.WIFEXITED(run.exit_status):
        exit_code = os.WEXITSTATUS(run.exit_status)
    elif os.WIFSIGNALED(run.exit_status):
        sig = os.WTERMSIG(run.exit_status)
        exit_code = -sig
    info = error_info(run.info, exit_code)
    stderr = run.stderr.decode('utf-8', 'replace')
    if status in (None, 'timeout') and run.oom:
        status = 'memory'
    if status == 'memory':
        info = {'type': 'MemoryError', 'message': 'the call used more than %d MiB across its processes, shared memory and files' % (mem_limit >> 20)}
    elif status == 'timeout':
        info = {'type': 'Timeout', 'message': 'wall-clock limit of %g s exceeded' % timeout}
    if status is None:
        if exit_code == 0:
            status = 'ok'
        elif info.get('type') == 'MemoryError' or sig == signal.SIGSEGV and 'MemoryError' in stderr:
            status = 'memory'
        elif sig == signal.SIGXCPU:
            status = 'timeout'
            info = {'type': 'CPUTimeLimit', 'message': 'CPU time limit exceeded'}
        elif sig == signal.SIGXFSZ:
            status = 'error'
            info = {'type': 'FileSizeLimit', 'message': 'file size limit exceeded'}
        elif exit_code == 120:
            status = 'internal'
        else:
            status = 'error'
            if not info and sig is not None:
                try:
                    name = signal.Signals(sig).name
                except ValueError:
                    name = str(sig)
                info = {'type': 'Signal', 'message': 'killed by signal %s' % name}
    return result(status, run.stdout.decode('utf-8', 'replace'), stderr, exit_code, info, round(run.duration_ms, 3),
                  run.stdout_truncated, run.stderr_truncated)


def result(status, stdout, stderr, exit_code, info, duration_ms, stdout_truncated, stderr_truncated):
    """The response's fields, in the protocol's order."""
    return {
        'status': status,
        'stdout': stdout,
        'stderr': stderr,
        'exit_code': exit_code,
        'error_type': info.get('type'),
        'error_line': info.get('line'),
        'error_message': info.get('message'),
        'duration_ms': duration_ms,
        'stdout_truncated': stdout_truncated,
        'stderr_truncated': stderr_truncated,
    }
