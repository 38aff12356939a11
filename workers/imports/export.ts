/**
 * Writing a run (native or imported) out as ATIF v1.4: one `<trajectory id>.trajectory.json` per trajectory in a
 * folder, read a page at a time so a run of any size exports in bounded memory. `npx toolsmith import` reads the
 * folder back (its layout is ATIF's). The folder is one the export creates, or an existing empty one; every file
 * is created new, never through a symlink or over a file planted there (`--out` is often under a shared /tmp).
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import type { Database } from '../../server/db/client.ts';
import { listRunTrajectoryContents, readTokensOf } from '../../server/store/trajectories.ts';
import { foreignOfStored, type StoredRow, toAtif } from '../../server/imports/atif-export.ts';

const PAGE = 200;

export async function exportRunAtif(
  db: Database,
  runId: string,
  outDir: string,
  agent: { name: string; version: string },
): Promise<{ trajectories: number }> {
  makeOutDir(outDir);
  let after: string | null = null;
  let n = 0;
  for (;;) {
    const page = await listRunTrajectoryContents(db, runId, after, PAGE);
    if (page.length === 0) break;
    const tokens = await readTokensOf(
      db,
      page.map((r) => r.id),
    );
    for (const r of page) {
      const row: StoredRow = { ...r, content: JSON.parse(r.content) as StoredRow['content'] };
      const doc = toAtif(foreignOfStored(row, tokens.get(r.id) ?? null), agent);
      writeNewFile(path.join(outDir, `${r.id}.trajectory.json`), JSON.stringify(doc));
      n++;
    }
    after = page.at(-1)!.id;
  }
  return { trajectories: n };
}

/** The folder created here, or an existing empty one (not a symlink); anything else is refused with the reason. */
export function makeOutDir(outDir: string) {
  fs.mkdirSync(path.dirname(path.resolve(outDir)), { recursive: true });
  try {
    // Not recursive: a folder that appears in between is EEXIST and checked like any existing one.
    fs.mkdirSync(outDir, { mode: 0o755 });
    return;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const st = fs.lstatSync(outDir);
  const refuse = (why: string) =>
    new UserError(`--out ${outDir} ${why}; not written to`, {
      field: '--out',
      fix: 'name a folder that does not exist yet (the export creates it) or an empty one',
    });
  if (st.isSymbolicLink()) throw refuse('is a symlink');
  if (!st.isDirectory()) throw refuse('is not a folder');
  if (fs.readdirSync(outDir).length > 0) throw refuse('already holds files');
}

const NEW_FILE = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW;

/**
 * A file written whole under a temporary name (O_CREAT|O_EXCL|O_NOFOLLOW: a planted link or file there fails, never
 * written through), then linked to its name (a link fails where a name exists: nothing planted is replaced), so a
 * reader following the folder never sees half a document.
 */
export function writeNewFile(file: string, text: string) {
  const tmp = `${file}.tmp`;
  let fd: number;
  try {
    fd = fs.openSync(tmp, NEW_FILE, 0o644);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST' || (e as NodeJS.ErrnoException).code === 'ELOOP')
      throw new UserError(`${tmp} appeared in the export folder (a symlink or file not written by it); not written`, {
        field: '--out',
      });
    throw e;
  }
  try {
    fs.writeSync(fd, text);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(tmp, file);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    throw new UserError(`${file} appeared in the export folder (a symlink or file not written by it); not replaced`, {
      field: '--out',
    });
  } finally {
    fs.unlinkSync(tmp);
  }
}
