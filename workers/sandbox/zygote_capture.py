"""Capture: what goes into a call and what comes out of it, through descriptors no path of the call's can name.

Isolates: the call's stdin (a pipe, or an anonymous memory file when it is big: no file the code could have
planted) and its stdout, stderr and info pipes, each read by the zygote up to a cap (Output: past the cap the
stream is cut and the call ends as output_limit; the info pipe has a fixed cap of its own, and overflowing it is no
output limit). Does not: trust what comes out (the info pipe's error report is checked in zygote_classify), nor
decide when to read (zygote_supervise's loop does).
"""
import os


def stdin_fd(data):
    """The call's stdin, passed without any path the code could have planted: a pipe when it fits in the pipe
    buffer (written and closed now, so the program sees EOF after it), else an anonymous memory file."""
    if len(data) <= 60000:
        r, w = os.pipe()
        os.write(w, data)
        os.close(w)
        return r
    fd = os.memfd_create('stdin', os.MFD_CLOEXEC)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
    os.lseek(fd, 0, os.SEEK_SET)
    os.set_inheritable(fd, True)
    return fd


class Output:
    """The call's three pipes, read into buffers: stdout and stderr up to `cap` bytes each, the info pipe (which
    carries only run_child's error summary) up to 64 KiB."""

    def __init__(self, out_r, err_r, info_r, cap):
        self.info_r = info_r
        self.cap = cap
        self.bufs = {out_r: bytearray(), err_r: bytearray(), info_r: bytearray()}
        self.truncated = {out_r: False, err_r: False}
        self.open_fds = [out_r, err_r, info_r]

    def read(self, fd):
        """Read what fd has ready. Returns True when stdout or stderr went over the cap (the rest is cut)."""
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            chunk = b''
        if not chunk:
            self.open_fds.remove(fd)
            return False
        buf = self.bufs[fd]
        limit = 65536 if fd == self.info_r else self.cap
        room = limit - len(buf)
        if len(chunk) > room:
            buf.extend(chunk[:max(0, room)])
            if fd in self.truncated:
                self.truncated[fd] = True
                return True
        else:
            buf.extend(chunk)
        return False
