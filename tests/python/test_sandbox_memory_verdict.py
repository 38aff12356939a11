"""The zygote's reading of a call's memory (workers/sandbox/zygote_cgroup.LimitWatch) against the real kernel:
a process in a real cgroup v1 memory folder, over its limit with the OOM killer on ('killed'), over it with the
killer off, waiting at the limit as a call does when the killer is late ('full'), and below it (None). The killer
is switched off with the kernel's own memory.oom_control: the one way to make it late on demand. This process stays
outside the folder, so it can read the folder's files while the process in it waits. Needs root and cgroup v1's
memory controller (skipped otherwise). Run by tests/integration/trainer-python.test.ts:

    .venv/bin/python -m unittest -v tests/python/test_sandbox_memory_verdict.py
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "sandbox"))
import zygote_cgroup  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memcg_folder  # noqa: E402

LIMIT = 64 << 20
LIMIT_KEY = ("memory", "memory.limit_in_bytes")


ROOT = memcg_folder.memory_root() if os.geteuid() == 0 else None


def hold(mb):
    """A process that touches `mb` MiB of shared anonymous memory (shmem: no reclaim without swap) and waits. Its
    page faults wait at the limit while the killer is off, as a call's do (a write() would fail with ENOMEM)."""
    return (
        "import mmap, time\n"
        "m = mmap.mmap(-1, %d << 20)\n"
        "for i in range(0, len(m), 4096): m[i] = 1\n"
        "print('held', flush=True)\n"
        "time.sleep(60)\n" % mb
    )


@unittest.skipUnless(ROOT, "needs root and cgroup v1's memory controller")
class MemoryVerdict(unittest.TestCase):
    def setUp(self):
        self.folder = os.path.join(ROOT, "toolsmith-verdict-test-%d" % os.getpid())
        os.mkdir(self.folder)
        self.write("memory.limit_in_bytes", str(LIMIT))
        # zygote_cgroup reads CG_DIR/memory/<file> in v1: point it at the folder.
        self.tmp = tempfile.mkdtemp()
        os.symlink(self.folder, os.path.join(self.tmp, "memory"))
        self.saved = (zygote_cgroup.CGROUP, zygote_cgroup.CG_DIR, dict(zygote_cgroup.LIMITS_SET))
        zygote_cgroup.CGROUP, zygote_cgroup.CG_DIR = "v1", self.tmp
        zygote_cgroup.forget_files()
        zygote_cgroup.LIMITS_SET.clear()
        zygote_cgroup.LIMITS_SET[LIMIT_KEY] = LIMIT
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stdout.close()
        zygote_cgroup.CGROUP, zygote_cgroup.CG_DIR = self.saved[0], self.saved[1]
        zygote_cgroup.forget_files()
        zygote_cgroup.LIMITS_SET.clear()
        zygote_cgroup.LIMITS_SET.update(self.saved[2])
        os.unlink(os.path.join(self.tmp, "memory"))
        os.rmdir(self.tmp)
        # The memfd's pages leave with its process; the folder is empty once they have.
        memcg_folder.remove(self.folder)

    def write(self, name, value):
        with open(os.path.join(self.folder, name), "w") as f:
            f.write(value)

    def start(self, mb):
        """Start `hold(mb)` inside the folder (it joins before it allocates anything)."""
        p = subprocess.Popen([sys.executable, "-c", hold(mb)], preexec_fn=memcg_folder.joiner(self.folder),
                             stdout=subprocess.PIPE)
        self.procs.append(p)
        return p

    def verdict_within(self, seconds, watch):
        """The first verdict that is not None within `seconds`, or None."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            v = watch.verdict()
            if v is not None:
                return v
            time.sleep(0.05)
        return None

    def test_below_the_limit_is_no_verdict(self):
        watch = zygote_cgroup.LimitWatch()
        p = self.start(16)
        self.assertEqual(p.stdout.readline(), b"held\n")
        self.assertIsNone(self.verdict_within(1.0, watch))
        self.assertFalse(zygote_cgroup.full_of_unreclaimable())

    def test_over_the_limit_with_the_killer_on_is_killed(self):
        watch = zygote_cgroup.LimitWatch()
        p = self.start(128)
        self.assertEqual(p.wait(timeout=30), -signal.SIGKILL, "the kernel's OOM killer ended it")
        self.assertEqual(watch.verdict(), "killed")

    def test_waiting_at_the_limit_with_the_killer_late_is_full(self):
        self.write("memory.oom_control", "1")
        watch = zygote_cgroup.LimitWatch()
        ooms = watch.ooms
        p = self.start(128)
        # The verdict must come once the process reaches its limit; how soon depends on how busy the machine is, so the
        # bound is generous (it only fails a watch that never says "full").
        self.assertEqual(self.verdict_within(60.0, watch), "full")
        self.assertIsNone(p.poll(), "it waits at its limit: nothing ended it")
        self.assertTrue(zygote_cgroup.full_of_unreclaimable())
        self.assertEqual(zygote_cgroup.oom_kills(), ooms, "the killer did not act")
        # Lifting a full limit (what the zygote does after such a call) lets it go on.
        zygote_cgroup.lift_limit_if_full()
        self.assertNotIn(LIMIT_KEY, zygote_cgroup.LIMITS_SET)
        self.assertEqual(p.stdout.readline(), b"held\n")


class StuckAtLimit(unittest.TestCase):
    """The pure rule for a call that retries its page fault at the limit while the OOM killer does not choose it
    (what a fresh CI machine showed: the call spinning for its whole 10 s, no kill counted). Samples, not a kernel:
    that state cannot be produced on demand."""

    LIMIT = 256 << 20

    def sample(self, hits, charged, used):
        return zygote_cgroup.LimitSample(hits, charged, used)

    def test_failing_charges_with_nothing_charged_at_the_limit_is_stuck(self):
        last, now = self.sample(10, 5000, self.LIMIT - 4096), self.sample(900, 5003, self.LIMIT - 8192)
        self.assertTrue(zygote_cgroup.stuck_at_limit(last, now, self.LIMIT))

    def test_streaming_through_page_cache_at_the_limit_is_not(self):
        last, now = self.sample(10, 5000, self.LIMIT), self.sample(900, 9000, self.LIMIT)
        self.assertFalse(zygote_cgroup.stuck_at_limit(last, now, self.LIMIT))

    def test_no_failed_charge_since_the_last_look_is_not(self):
        last, now = self.sample(10, 5000, self.LIMIT), self.sample(10, 5000, self.LIMIT)
        self.assertFalse(zygote_cgroup.stuck_at_limit(last, now, self.LIMIT))

    def test_failing_charges_well_below_the_limit_are_not(self):
        # a charge failed and reclaim then freed page cache: the cgroup is no longer full
        last, now = self.sample(10, 5000, self.LIMIT - (64 << 20)), self.sample(12, 5000, self.LIMIT - (64 << 20))
        self.assertFalse(zygote_cgroup.stuck_at_limit(last, now, self.LIMIT))

    def test_no_earlier_look_or_no_limit_is_not(self):
        now = self.sample(900, 5003, self.LIMIT)
        self.assertFalse(zygote_cgroup.stuck_at_limit(None, now, self.LIMIT))
        self.assertFalse(zygote_cgroup.stuck_at_limit(self.sample(1, 5000, self.LIMIT), now, None))


if __name__ == "__main__":
    unittest.main()
