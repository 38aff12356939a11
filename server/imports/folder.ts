/**
 * The folder of a run trained elsewhere (issue 28): where it really is (an import root is checked after symlinks, so
 * a link cannot lead out of it), and which files it holds. Shared by the web app's and the CLI's import and by the
 * worker that reads the folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import { IMPORT_LIMITS, type ImportLimits } from './bounds.ts';

/** The folder after symlinks, refused unless it lies inside one of `roots` (also after symlinks) when roots are given. */
export function resolveImportFolder(input: string, roots: string[] | null): string {
  let real: string;
  try {
    real = fs.realpathSync(input);
  } catch {
    throw new UserError(`no folder at ${input}`, { field: 'path' });
  }
  if (!fs.statSync(real).isDirectory()) throw new UserError(`${input} is not a folder`, { field: 'path' });
  if (roots) {
    const inside = roots.some((r) => {
      let root: string;
      try {
        root = fs.realpathSync(r);
      } catch {
        return false;
      }
      const rel = path.relative(root, real);
      return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
    });
    if (!inside)
      throw new UserError(
        `${input} is not inside an import root (TOOLSMITH_IMPORT_ROOTS: ${roots.join(':') || 'none'}), after symlinks`,
        { field: 'path' },
      );
  }
  return real;
}

/** Extensions of pickled Python objects: loading one runs whatever code it names, so they are never read. */
export const PICKLED = /\.(pt|pth|pkl|pickle|bin|ckpt)$/i;

/**
 * Every regular file under `folder`, as '/'-separated paths relative to it, walked without following symlinked
 * folders (a tree of links would otherwise be walked without end) to at most `limits.walkDepth` folders down, looking
 * at most `limits.walkEntries` entries (more is refused). A symlinked file is listed only when it resolves inside the
 * folder (else it is listed in `outside`); the reader opens it contained again (server/imports/open.ts), since it may
 * change after this. Hidden folders (.git, .cache) are skipped; `skipped` names what was left out and why.
 */
export function listFiles(
  folder: string,
  limits: Pick<ImportLimits, 'walkDepth' | 'walkEntries'> = IMPORT_LIMITS,
): { files: string[]; outside: string[]; skipped: string[] } {
  const files: string[] = [];
  const outside: string[] = [];
  const skipped: string[] = [];
  const note = (what: string) => {
    if (skipped.length < 20) skipped.push(what);
  };
  let entries = 0;
  const walk = (dir: string, rel: string, depth: number) => {
    // opendir streams a folder's entries: a folder of millions is refused at the cap, not listed first.
    const d = fs.opendirSync(dir);
    try {
      for (let e = d.readSync(); e !== null; e = d.readSync()) {
        if (++entries > limits.walkEntries)
          throw new UserError(`more than ${limits.walkEntries} entries under ${folder}; not walked further`, {
            field: 'path',
          });
        if (e.name.startsWith('.')) continue;
        const abs = path.join(dir, e.name);
        const r = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) {
          if (depth < limits.walkDepth) walk(abs, r, depth + 1);
          else note(`${r}/ (deeper than ${limits.walkDepth} folders)`);
        } else if (e.isFile()) files.push(r);
        else if (e.isSymbolicLink()) {
          let real: string;
          let st: fs.Stats;
          try {
            real = fs.realpathSync(abs);
            st = fs.statSync(real);
          } catch {
            continue; // dangling
          }
          const within = path.relative(folder, real);
          if (within.startsWith('..') || path.isAbsolute(within)) outside.push(r);
          else if (st.isFile()) files.push(r);
          else if (st.isDirectory()) note(`${r} (a symlinked folder; not followed)`);
        }
      }
    } finally {
      d.closeSync();
    }
  };
  walk(folder, '', 0);
  return { files, outside, skipped };
}
