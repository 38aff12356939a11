import fs from 'node:fs';
import path from 'node:path';
import type { CgroupBind } from './bwrap.ts';

/**
 * One call cgroup per zygote, charging everything a call's processes take (anonymous memory, memfd, SysV and
 * POSIX shared memory, /tmp pages) and counting its processes. The zygote itself starts in it (enterCgroup), so
 * its calls are in it from their fork with no migration per call (a migration waits for an RCU grace period); it
 * sets each call's limits on top of its own usage (zygote_cgroup.py set_cgroup_limits). cgroup v1 (memory and pids hierarchies) or v2 (one folder). Creating
 * them needs root, or a delegated v2 folder (TOOLSMITH_SANDBOX_CGROUP_ROOT); without either the pool says so and
 * the zygote counts memory by polling its calls' processes instead.
 */

/** Where the memory and pids controllers are for this process: parsed from /proc/self/cgroup and mountinfo. */
export type CgroupLayout = { version: 'v1'; memory: string; pids: string } | { version: 'v2'; dir: string };

/** Pure: the folders of this process's own cgroups, from the text of /proc/self/cgroup and /proc/self/mountinfo. */
export function cgroupLayout(procCgroup: string, mountinfo: string): CgroupLayout | null {
  const mounts = mountinfo
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [left, right = ''] = line.split(' - ');
      const f = left.split(' ');
      const [fstype, , superOpts = ''] = right.split(' ');
      return { root: unescape(f[3] ?? ''), point: unescape(f[4] ?? ''), fstype, opts: superOpts.split(',') };
    });
  // "hierarchy-id:controller,list:path"; v2's line is "0::path".
  const own = procCgroup
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const a = line.indexOf(':');
      const b = line.indexOf(':', a + 1);
      return { controllers: line.slice(a + 1, b).split(','), path: line.slice(b + 1) };
    });
  const v1 = (controller: string) => {
    const m = mounts.find((x) => x.fstype === 'cgroup' && x.opts.includes(controller));
    const c = own.find((x) => x.controllers.includes(controller));
    return m && c ? within(m, c.path) : null;
  };
  const memory = v1('memory');
  const pids = v1('pids');
  if (memory && pids) return { version: 'v1', memory, pids };
  const m2 = mounts.find((x) => x.fstype === 'cgroup2');
  const c2 = own.find((x) => x.controllers.length === 1 && x.controllers[0] === '');
  if (m2 && c2 && !memory && !pids) return { version: 'v2', dir: within(m2, c2.path) };
  return null;
}

/** A cgroup path as seen by this process, under a mount whose root may itself be a cgroup (a container's). */
function within(m: { root: string; point: string }, cgroupPath: string): string {
  const rel = m.root === '/' ? cgroupPath : path.posix.relative(m.root, cgroupPath);
  return path.posix.join(m.point, rel.startsWith('..') ? '' : rel).replace(/(.)\/$/, '$1');
}

function unescape(s: string) {
  return s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

/** What the zygotes do when the pool has no call cgroups, for the log. */
const POLLING = "memory is counted by polling each call's processes (shared memory, memfd and /tmp are not counted)";

/** The pool's cgroups: one folder per zygote under toolsmith-sandbox-<pid> in each hierarchy. */
export class PoolCgroups {
  private constructor(
    readonly layout: CgroupLayout,
    private readonly bases: string[],
  ) {}

  /** Creates the pool's folders (as root, or under a delegated v2 folder), or logs why it cannot and gives null. */
  static create(poolId: string, log: (line: string) => void): PoolCgroups | null {
    const delegated = process.env.TOOLSMITH_SANDBOX_CGROUP_ROOT;
    if (process.getuid?.() !== 0 && !delegated) {
      log(`not root: no call cgroups; ${POLLING}`);
      return null;
    }
    let layout: CgroupLayout | null;
    try {
      layout = cgroupLayout(
        fs.readFileSync('/proc/self/cgroup', 'utf8'),
        fs.readFileSync('/proc/self/mountinfo', 'utf8'),
      );
    } catch {
      layout = null;
    }
    if (delegated) layout = { version: 'v2', dir: delegated };
    if (!layout) {
      log(`no memory and pids cgroup controllers found: ${POLLING}`);
      return null;
    }
    const name = `toolsmith-sandbox-${poolId}`;
    const roots = layout.version === 'v1' ? [layout.memory, layout.pids] : [layout.dir];
    try {
      for (const root of roots) removeStale(root);
      const bases = roots.map((r) => path.join(r, name));
      for (const b of bases) {
        fs.mkdirSync(b, { recursive: true });
        // The zygotes (another uid) reach their own folder through this one: searchable whatever the umask (077 in
        // Toolsmith's processes, server/db/private-files.ts).
        fs.chmodSync(b, 0o755);
      }
      if (layout.version === 'v2') {
        // v2 hands controllers down explicitly; a folder with processes in it cannot (the no-internal-process rule).
        for (const dir of [layout.dir, bases[0]])
          fs.writeFileSync(path.join(dir, 'cgroup.subtree_control'), '+memory +pids');
      }
      return new PoolCgroups(layout, bases);
    } catch (e) {
      log(
        `cannot create the sandbox's cgroups under ${roots.join(' and ')} (${(e as Error).message}): ${POLLING}. Run as root, or delegate a cgroup v2 folder and set TOOLSMITH_SANDBOX_CGROUP_ROOT.`,
      );
      return null;
    }
  }

  /** The call cgroup of one zygote, owned by its uid so that the zygote can set its calls' limits. */
  forZygote(index: number, uid: number): CgroupBind {
    const dirs = this.bases.map((b) => path.join(b, `z${index}`));
    for (const d of dirs) {
      fs.mkdirSync(d, { recursive: true });
      fs.chownSync(d, uid, uid);
      for (const f of fs.readdirSync(d)) fs.chownSync(path.join(d, f), uid, uid);
    }
    return this.layout.version === 'v1'
      ? { version: 'v1', memory: dirs[0], pids: dirs[1] }
      : { version: 'v2', dir: dirs[0] };
  }

  /** Remove the pool's folders (after its zygotes are gone: a cgroup with processes cannot be removed). */
  async remove(): Promise<void> {
    for (let attempt = 0; attempt < 50; attempt++) {
      let left = false;
      for (const b of this.bases) left = !removeTree(b) || left;
      if (!left) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** rmdir a cgroup folder and its children (cgroup files cannot be unlinked; empty cgroups are rmdir-ed). */
function removeTree(dir: string): boolean {
  if (!fs.existsSync(dir)) return true;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) if (e.isDirectory()) removeTree(path.join(dir, e.name));
  try {
    fs.rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** Folders of pools whose process is gone (killed without closing). */
function removeStale(root: string) {
  for (const name of fs.readdirSync(root)) {
    const m = /^toolsmith-sandbox-(\d+)-/.exec(name);
    if (m && !alive(Number(m[1]))) removeTree(path.join(root, name));
  }
}

function alive(pid: number) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Pure: `cmd` started inside the cgroups whose folders are given (each `cgroup.procs` written), holding each folder
 * open as a descriptor from fd CGROUP_FD_BASE on (the zygote reaches its cgroup only through them:
 * zygote_cgroup.py CG_DIR_FDS; nothing of the cgroup is mounted in the sandbox), with the lowest OOM score where the
 * kernel allows it (CAP_SYS_RESOURCE, which root on these machines lacks: the score then stays 0), which its
 * processes inherit until a call raises its own (zygote_cgroup.py prefer_as_oom_victim): the kernel then kills a
 * call over its limit, not the zygote that shares its cgroup (zygote_reserve.py covers the zygote when none is left).
 */
export function enterCgroup(dirs: string[], cmd: { file: string; args: string[] }): { file: string; args: string[] } {
  const script =
    'echo -1000 2>/dev/null >/proc/self/oom_score_adj; n=$1; shift; fd=' +
    CGROUP_FD_BASE +
    '; while [ "$n" -gt 0 ]; do echo 0 >"$1/cgroup.procs" || exit 97; eval "exec $fd<\\"\\$1\\"" || exit 97; fd=$((fd+1)); shift; n=$((n-1)); done; exec "$@"';
  return {
    file: '/bin/sh',
    args: ['-c', script, 'sh', String(dirs.length), ...dirs, cmd.file, ...cmd.args],
  };
}

/** The first descriptor enterCgroup opens a cgroup folder at (v1: memory, then pids; v2: the one folder). */
export const CGROUP_FD_BASE = 5;

/** A zygote's cgroup folders in the order enterCgroup opens them (zygote_cgroup.py CG_DIR_FDS expects it). */
export function cgroupDirs(bind: CgroupBind): string[] {
  return bind.version === 'v1' ? [bind.memory, bind.pids] : [bind.dir];
}
