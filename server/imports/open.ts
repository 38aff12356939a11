/**
 * The one way an importer opens a file of a foreign run's folder: contained in the folder and a regular
 * file. The listing is older than the open (a writer may have swapped a listed file for a symlink since), so the
 * file is resolved, checked to lie inside the folder, opened without following a final symlink and without blocking
 * (a FIFO would otherwise hold the worker), and the opened descriptor is checked again: a regular file, the same
 * device and inode as the path checked, and (where /proc shows it) really inside the folder.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Why a file was not opened; `file` is its path relative to the run's folder. */
export class RefusedFile extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
    /** The file is not there (any more): nothing to report, a later pass may find it. */
    readonly missing = false,
  ) {
    super(`${file}: ${reason}`);
  }
}

export interface OpenedFile {
  fd: number;
  size: number;
  /** Relative to the run's folder. */
  file: string;
  close(): void;
}

const FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK | (fs.constants.O_NOCTTY ?? 0);

/** What a non-regular file is, for the refusal. */
function kindOf(st: fs.Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  if (st.isDirectory()) return 'a folder';
  if (st.isSymbolicLink()) return 'a symlink';
  return 'not a regular file';
}

const inside = (root: string, real: string) => {
  const rel = path.relative(root, real);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
};

/**
 * Open `file` (relative, '/'-separated) of `folder` for reading, refusing with RefusedFile what is outside the folder
 * after symlinks, not a regular file, larger than `maxBytes`, or changed between the check and the open.
 */
export function openContained(folder: string, file: string, maxBytes: number): OpenedFile {
  const refuse = (reason: string, missing = false) => new RefusedFile(file, reason, missing);
  if (path.isAbsolute(file) || file.split(/[\\/]/).includes('..')) throw refuse('not a path inside the folder');
  let root: string;
  let real: string;
  try {
    root = fs.realpathSync(folder);
    real = fs.realpathSync(path.join(root, file));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    throw refuse(code === 'ENOENT' ? 'not there' : `cannot be resolved (${code})`, code === 'ENOENT');
  }
  if (!inside(root, real)) throw refuse('leads outside the run folder (a symlink); not read');
  let checked: fs.Stats;
  try {
    checked = fs.lstatSync(real);
  } catch {
    throw refuse('not there', true);
  }
  if (!checked.isFile()) throw refuse(`${kindOf(checked)}, not a regular file; not read`);
  let fd: number;
  try {
    fd = fs.openSync(real, FLAGS);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw refuse('became a symlink after it was checked; not read');
    throw refuse(code === 'ENOENT' ? 'not there' : `cannot be opened (${code})`, code === 'ENOENT');
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw refuse(`${kindOf(st)}, not a regular file; not read`);
    if (st.dev !== checked.dev || st.ino !== checked.ino) throw refuse('changed after it was checked; not read');
    const opened = openedPath(fd);
    if (opened !== null && !inside(root, opened)) throw refuse('leads outside the run folder; not read');
    if (st.size > maxBytes) throw refuse(`larger than ${maxBytes} bytes (${st.size}); not read`);
    return { fd, size: st.size, file, close: () => fs.closeSync(fd) };
  } catch (e) {
    fs.closeSync(fd);
    throw e;
  }
}

/** Where the kernel says an open descriptor's file is (Linux); null where it cannot say. */
function openedPath(fd: number): string | null {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

/** `fn` over the opened file, closed afterwards whatever happens. */
export async function withContained<T>(
  folder: string,
  file: string,
  maxBytes: number,
  fn: (f: OpenedFile) => T | Promise<T>,
): Promise<T> {
  const f = openContained(folder, file, maxBytes);
  try {
    return await fn(f);
  } finally {
    f.close();
  }
}

/** The whole of an opened file (already checked against its size cap when opened), read from its descriptor. */
export function readAll(f: OpenedFile): Buffer {
  const buf = Buffer.allocUnsafe(f.size);
  let got = 0;
  while (got < f.size) {
    const n = fs.readSync(f.fd, buf, got, f.size - got, got);
    if (n <= 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** An opened file as hyparquet's AsyncBuffer: byte ranges read from the descriptor, never by path again. */
export function asyncBufferOf(f: OpenedFile): {
  byteLength: number;
  slice(start: number, end?: number): Promise<ArrayBuffer>;
} {
  return {
    byteLength: f.size,
    async slice(start, end = f.size) {
      const len = Math.max(0, Math.min(end, f.size) - start);
      const buf = Buffer.alloc(len);
      let got = 0;
      while (got < len) {
        const n = fs.readSync(f.fd, buf, got, len - got, start + got);
        if (n <= 0) break;
        got += n;
      }
      return buf.buffer.slice(buf.byteOffset, buf.byteOffset + got) as ArrayBuffer;
    },
  };
}
