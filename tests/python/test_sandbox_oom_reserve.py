"""The zygote's OOM reserve (workers/sandbox/zygote_reserve.py) against the real kernel: a process standing in for
the zygote, in a real cgroup v1 memory folder that memory no process holds keeps full (a file on /dev/shm written
from inside the folder, as a dead call's shared memory stays charged until the kernel frees it), touches a few new
pages. With reserves the kernel's OOM killer ends a reserve (or both) and the zygote goes on; without one it ends the
zygote, the only process left (which is what replaced zygotes on busy machines). Needs root and cgroup v1's memory
controller (skipped otherwise). Run by tests/integration/trainer-python.test.ts:

    .venv/bin/python -m unittest -v tests/python/test_sandbox_oom_reserve.py
"""
import os
import subprocess
import sys
import tempfile
import time
import unittest

SANDBOX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "sandbox")
sys.path.insert(0, SANDBOX)
import zygote_reserve  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memcg_folder  # noqa: E402

LIMIT = 96 << 20
# What the stand-in touches once the folder is full: less than the reserve gives back.
TOUCH = 4 << 20
# How full the folder is left: a few MB short of its limit, less than TOUCH.
SLACK = 1 << 20


ROOT = memcg_folder.memory_root() if os.geteuid() == 0 else None

# The zygote's stand-in: zygote_cgroup pointed at the folder, a reserve made (or not), then, once told, new pages.
STAND_IN = """
import mmap, sys
sys.path.insert(0, %(sandbox)r)
import zygote_cgroup, zygote_reserve
zygote_cgroup.CGROUP, zygote_cgroup.CG_DIR = 'v1', %(cg_dir)r
if %(reserve)r:
    zygote_reserve.ensure()
print(len(zygote_reserve.LIVE), flush=True)
sys.stdin.readline()
m = mmap.mmap(-1, %(touch)d, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
for i in range(0, len(m), mmap.PAGESIZE):
    m[i] = 1
print('alive', flush=True)
sys.stdin.readline()
"""


@unittest.skipUnless(ROOT, "needs root and cgroup v1's memory controller")
class OomReserve(unittest.TestCase):
    def setUp(self):
        self.folder = os.path.join(ROOT, "toolsmith-reserve-test-%d" % os.getpid())
        os.mkdir(self.folder)
        self.write("memory.limit_in_bytes", str(LIMIT))
        self.tmp = tempfile.mkdtemp()
        os.symlink(self.folder, os.path.join(self.tmp, "memory"))
        self.shm = "/dev/shm/toolsmith-reserve-test-%d" % os.getpid()
        self.procs = []

    def tearDown(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stdin.close()
            p.stdout.close()
        if os.path.exists(self.shm):
            os.unlink(self.shm)
        os.unlink(os.path.join(self.tmp, "memory"))
        os.rmdir(self.tmp)
        memcg_folder.remove(self.folder)

    def write(self, name, value):
        with open(os.path.join(self.folder, name), "w") as f:
            f.write(value)

    def read(self, name):
        with open(os.path.join(self.folder, name)) as f:
            return f.read()

    def stand_in(self, reserve):
        code = STAND_IN % {"sandbox": SANDBOX, "cg_dir": self.tmp, "reserve": reserve, "touch": TOUCH}
        p = subprocess.Popen([sys.executable, "-c", code], preexec_fn=memcg_folder.joiner(self.folder),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.procs.append(p)
        return p, int(p.stdout.readline())

    def fill(self):
        """Charge the folder to within SLACK of its limit with pages no process holds: a /dev/shm file appended to by
        `dd` (small: its own memory, given back when it exits, must fit too) from inside the folder."""
        for _ in range(8):
            room = LIMIT - int(self.read("memory.usage_in_bytes")) - SLACK
            if room < (64 << 10):
                break
            r = subprocess.run(["dd", "if=/dev/zero", "of=" + self.shm, "bs=64k", "count=%d" % (room >> 16),
                                "oflag=append", "conv=notrunc", "status=none"], preexec_fn=memcg_folder.joiner(self.folder))
            self.assertEqual(r.returncode, 0, "the file fits: the folder is full, not over")
        self.assertEqual(self.oom_kills(), 0, "filling it ended nothing")
        used = int(self.read("memory.usage_in_bytes"))
        self.assertGreater(used + TOUCH, LIMIT, "what the stand-in touches next does not fit")

    def oom_kills(self):
        for line in self.read("memory.oom_control").splitlines():
            if line.startswith("oom_kill "):
                return int(line.split()[1])
        return 0

    def test_with_a_reserve_the_killer_ends_the_reserve_and_the_zygote_goes_on(self):
        p, reserves = self.stand_in(True)
        self.assertEqual(reserves, len(zygote_reserve.OOM_SCORES), "the reserves were made")
        self.assertEqual(sorted(self.score(r) for r in self.members() if r != p.pid), sorted(zygote_reserve.OOM_SCORES))
        self.fill()
        p.stdin.write(b"\n")
        p.stdin.flush()
        self.assertEqual(p.stdout.readline(), b"alive\n", "the zygote's new pages were charged")
        self.assertIsNone(p.poll())
        kills = self.oom_kills()
        self.assertIn(kills, range(1, len(zygote_reserve.OOM_SCORES) + 1), "the killer ended reserves only")
        # A killed reserve leaves the folder when it has run its exit, which a busy machine may schedule after the
        # zygote's pages were charged (the kernel frees a victim's memory before it exits): polled for.
        members = self.members_once(1 + len(zygote_reserve.OOM_SCORES) - kills)
        self.assertEqual(len(members), 1 + len(zygote_reserve.OOM_SCORES) - kills, members)
        self.assertIn(p.pid, members, "the zygote stays")

    def test_without_one_the_killer_ends_the_zygote(self):
        p, reserves = self.stand_in(False)
        self.assertEqual(reserves, 0)
        self.fill()
        p.stdin.write(b"\n")
        p.stdin.flush()
        self.assertEqual(p.stdout.readline(), b"", "it never got its pages")
        self.assertEqual(p.wait(timeout=30), -9, "the kernel's OOM killer ended it")
        self.assertEqual(self.oom_kills(), 1)

    def score(self, pid):
        with open("/proc/%d/oom_score_adj" % pid) as f:
            return int(f.read())

    def members(self):
        return sorted(int(x) for x in self.read("cgroup.procs").split())

    def members_once(self, n, timeout=60):
        """The folder's processes once there are `n` or fewer (or after `timeout` s, a failure bound)."""
        deadline = time.monotonic() + timeout
        members = self.members()
        while len(members) > n and time.monotonic() < deadline:
            time.sleep(0.05)
            members = self.members()
        return members


if __name__ == "__main__":
    unittest.main()
