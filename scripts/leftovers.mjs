// Processes a test part left running. `npm test` starts each part with a marker in its environment
// (PART_MARKER=<id>); every process the part starts inherits it, including daemons that detach from their
// parent (a Ray cluster, a database, a served model), so after the part any live process whose environment
// still holds the marker was left behind. CI runs next on this machine: a leftover slows it into timeouts.
import fs from 'node:fs';

export const PART_MARKER = 'TOOLSMITH_TEST_PART';

/** Pure: whether a NUL-separated environment block holds the marker with this id. */
export function holdsMarker(environ, id) {
  return environ.split('\0').includes(`${PART_MARKER}=${id}`);
}

/** Live processes (not zombies) whose environment holds the marker: [{pid, command}]. Needs to read other
 *  processes' environments (root, or the same user). */
export function markedProcesses(id) {
  const found = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (!holdsMarker(fs.readFileSync(`/proc/${name}/environ`, 'latin1'), id)) continue;
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      const command = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').trim();
      found.push({ pid: Number(name), command: command.slice(0, 200) });
    } catch {
      /* gone, or not ours to read */
    }
  }
  return found;
}

/** After a part: the processes it left, once those still ending have had `graceMs` to end (polled, not slept).
 *  Each one found is then killed, so that it cannot slow the parts after it. The grace is generous because it costs
 *  nothing when the part left nothing (the poll ends at once): a process still ending (a database, a Ray node shutting
 *  down) may be stalled for seconds beside the other lane, and that is no leftover; only a real one waits it out. */
export async function leftoverProcesses(id, graceMs = 60_000) {
  const until = Date.now() + graceMs;
  let left = markedProcesses(id);
  while (left.length > 0 && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 200));
    left = markedProcesses(id);
  }
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      /* ended meanwhile */
    }
  }
  return left;
}
