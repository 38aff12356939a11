import fs from 'node:fs';

/**
 * Where a zygote's processes are when it stopped answering: for the log line that replaces it. A zygote blocked in
 * the kernel (waiting on a lock that a starved kernel worker holds, say) and one hung in Python look the same to
 * the pool; their kernel state and stack tell them apart, after the fact. Linux /proc only; the kernel stack needs
 * root, and what cannot be read is left out.
 */

/** One line of /proc/PID/stat, the fields after the command: [state, ppid, ...] (the command may hold spaces). */
export function parseStat(stat: string): { comm: string; state: string; ppid: number; nice: number } | null {
  const open = stat.indexOf('(');
  const close = stat.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  const rest = stat.slice(close + 2).split(' ');
  // After the command: state is field 3, ppid 4, nice 19 (proc(5)).
  return { comm: stat.slice(open + 1, close), state: rest[0], ppid: Number(rest[1]), nice: Number(rest[16]) };
}

/** A kernel stack as /proc/PID/stack prints it, as its innermost `frames` function names. */
export function stackFrames(stack: string, frames = 5): string[] {
  return stack
    .split('\n')
    .map((l) => l.replace(/^\[<\w+>\] /, '').replace(/\+0x.*$/, ''))
    .filter(Boolean)
    .slice(0, frames);
}

function read(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** `root` and every process below it: "pid comm state nice wchan [stack < ...]", at most `limit` of them. */
export function whereProcessesAre(root: number | undefined, limit = 6): string {
  if (!root || process.platform !== 'linux') return 'unknown';
  const parents = new Map<number, number>();
  const stats = new Map<number, NonNullable<ReturnType<typeof parseStat>>>();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = parseStat(read(`/proc/${name}/stat`) ?? '');
    if (!s) continue;
    stats.set(Number(name), s);
    parents.set(Number(name), s.ppid);
  }
  const tree = [root];
  for (let i = 0; i < tree.length && tree.length < limit; i++)
    for (const [pid, ppid] of parents) if (ppid === tree[i] && tree.length < limit) tree.push(pid);
  const lines = tree.flatMap((pid) => {
    const s = stats.get(pid);
    if (!s) return [];
    const wchan = read(`/proc/${pid}/wchan`)?.trim() || '-';
    const stack = stackFrames(read(`/proc/${pid}/stack`) ?? '');
    // A session's scheduler group weighs as one process of the group's nice, whatever its members' own.
    const group = read(`/proc/${pid}/autogroup`)?.trim().replace(/^\//, '');
    return [
      `${pid} ${s.comm} ${s.state} nice ${s.nice}${group ? ` (${group})` : ''} wchan ${wchan}${stack.length ? ` [${stack.join(' < ')}]` : ''}`,
    ];
  });
  return lines.join('; ') || 'gone';
}
