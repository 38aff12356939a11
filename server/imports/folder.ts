/**
 * The folder of a run trained elsewhere (issue 28): where it really is (an import root is checked after symlinks, so
 * a link cannot lead out of it), and which files it holds. Shared by the web app's and the CLI's import and by the
 * worker that reads the folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';

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
 * Every regular file under `folder`, as '/'-separated paths relative to it. A symlink is followed only when it
 * resolves inside the folder (else it is listed in `outside`); hidden folders (.git, .cache) are skipped.
 */
export function listFiles(folder: string, limit = 200_000): { files: string[]; outside: string[] } {
  const files: string[] = [];
  const outside: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.')) continue;
      const abs = path.join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      let isDir = e.isDirectory();
      let isFile = e.isFile();
      if (e.isSymbolicLink()) {
        let real: string;
        try {
          real = fs.realpathSync(abs);
        } catch {
          continue; // dangling
        }
        const within = path.relative(folder, real);
        if (within.startsWith('..') || path.isAbsolute(within)) {
          outside.push(r);
          continue;
        }
        const st = fs.statSync(real);
        isDir = st.isDirectory();
        isFile = st.isFile();
      }
      if (isDir) walk(abs, r);
      else if (isFile) files.push(r);
      if (files.length > limit) throw new UserError(`more than ${limit} files under ${folder}`, { field: 'path' });
    }
  };
  walk(folder, '');
  return { files, outside };
}
