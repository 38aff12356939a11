"""The zygote's view of its call cgroup's members (workers/sandbox/zygote_cgroup.cgroup_procs) against the real
kernel: a member that has exited is gone from the very next read, however often the folder was read before. cgroup
v1 keeps the list it made at an open file's first read for every later read of that file while reads come less than
a second apart, so a zygote polling a kept descriptor saw a reserve the OOM killer had taken as a member until it
gave up and was replaced. Needs root and cgroup v1's memory controller (skipped otherwise). Run by
tests/integration/trainer-python.test.ts:

    .venv/bin/python -m unittest -v tests/python/test_sandbox_cgroup_members.py
"""
import os
import subprocess
import sys
import tempfile
import unittest

SANDBOX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "workers", "sandbox")
sys.path.insert(0, SANDBOX)
import zygote_cgroup  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import memcg_folder  # noqa: E402

ROOT = memcg_folder.memory_root() if os.geteuid() == 0 else None


@unittest.skipUnless(ROOT, "needs root and cgroup v1's memory controller")
class CgroupMembers(unittest.TestCase):
    def setUp(self):
        self.folder = os.path.join(ROOT, "toolsmith-members-test-%d" % os.getpid())
        os.mkdir(self.folder)
        self.tmp = tempfile.mkdtemp()
        os.symlink(self.folder, os.path.join(self.tmp, "memory"))
        self.was = zygote_cgroup.CGROUP, zygote_cgroup.CG_DIR
        zygote_cgroup.CGROUP, zygote_cgroup.CG_DIR = "v1", self.tmp

    def tearDown(self):
        zygote_cgroup.forget_files()
        zygote_cgroup.CGROUP, zygote_cgroup.CG_DIR = self.was
        os.unlink(os.path.join(self.tmp, "memory"))
        os.rmdir(self.tmp)
        memcg_folder.remove(self.folder)

    def member(self):
        return subprocess.Popen(["sleep", "600"], preexec_fn=memcg_folder.joiner(self.folder))

    def test_an_exited_member_is_gone_from_the_next_read(self):
        first, second = self.member(), self.member()
        try:
            # Read back to back, as prove_clean polls: each read well within a second of the one before.
            self.assertEqual(sorted(zygote_cgroup.cgroup_procs()), sorted([first.pid, second.pid]))
            first.kill()
            first.wait()  # reaped: the kernel has taken it out of the cgroup
            self.assertEqual(zygote_cgroup.cgroup_procs(), [second.pid])
            second.kill()
            second.wait()
            self.assertEqual(zygote_cgroup.cgroup_procs(), [])
            self.assertEqual(zygote_cgroup.cgroup_procs(), [])
        finally:
            for p in (first, second):
                if p.poll() is None:
                    p.kill()
                    p.wait()

    def test_the_zygote_and_its_spared_helpers_are_not_members(self):
        helper = self.member()
        try:
            zygote_cgroup.SPARED.add(helper.pid)
            self.assertEqual(zygote_cgroup.cgroup_procs(), [])
        finally:
            zygote_cgroup.SPARED.discard(helper.pid)
            helper.kill()
            helper.wait()


if __name__ == "__main__":
    unittest.main()
