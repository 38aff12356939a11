import fs from 'node:fs';
import path from 'node:path';

/**
 * Toolsmith's data is its users' (password hashes, tokens, run data, checkpoints, models): nothing it writes is for
 * other accounts of the machine. Every process that writes there sets umask 077 at start (bin/toolsmith.mjs,
 * scripts/start.mjs, scripts/web-server.mjs), so files come out 0600 and folders 0700 whoever creates them (the
 * trainer's Python and SQLite's -wal/-shm included); the helpers here make the same hold for the folders and
 * files created through them when a process did not (tests, library use), and tighten what an older version made.
 */
export const PRIVATE_UMASK = 0o077;

/** mkdir -p with 0700 for every folder created, and the leaf tightened to 0700 when it already existed. */
export function mkdirPrivate(dir: string): void {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  tighten(dir);
}

/** chmod go-rwx on one path (a symlink is left alone: chmod would follow it). Errors other than "gone" throw. */
export function tighten(p: string): void {
  let st: fs.Stats;
  try {
    st = fs.lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw e;
  }
  if (st.isSymbolicLink() || (st.mode & 0o077) === 0) return;
  // A sticky folder (/tmp, /var/tmp) is shared by design: a database named there must not close it to everyone
  // else (as root, DATABASE_URL=file:/tmp/x.db once made /tmp 0700, and PostgreSQL's initdb could not reach its folder).
  if (st.isDirectory() && st.mode & 0o1000) return;
  // Someone else's file (a shared parent such as /tmp) is not ours to change.
  if (typeof process.getuid === 'function' && st.uid !== process.getuid() && process.getuid() !== 0) return;
  fs.chmodSync(p, st.mode & 0o7700);
}

/** A SQLite database file and its -wal/-shm/-journal, owner-only (created empty at 0600 when missing). */
export function privateSqliteFiles(file: string): void {
  if (file === ':memory:') return;
  mkdirPrivate(path.dirname(file));
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  // SQLite creates -wal and -shm with the database file's permissions, so 0600 here keeps them private too.
  for (const f of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) tighten(f);
}

/** chmod -R go-rwx: every folder and file under `root` (symlinks not followed). Idempotent; returns how many changed. */
export function tightenTree(root: string): number {
  let changed = 0;
  const walk = (p: string) => {
    let st: fs.Stats;
    try {
      st = fs.lstatSync(p);
    } catch {
      return;
    }
    if (st.isSymbolicLink()) return;
    if (st.mode & 0o077) {
      tighten(p);
      changed++;
    }
    if (st.isDirectory()) for (const name of fs.readdirSync(p)) walk(path.join(p, name));
  };
  walk(root);
  return changed;
}
