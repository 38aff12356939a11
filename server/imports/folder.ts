/**
 * The folder of a run trained elsewhere: where it really is (an import root is checked after symlinks, so
 * a link cannot lead out of it), and which files it holds. Shared by the web app's and the CLI's import and by the
 * worker that reads the folder.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import { IMPORT_LIMITS, type ImportLimits } from './bounds.ts';

/**
 * The folder after symlinks, refused unless it lies inside one of `roots` (also after symlinks) when roots are given.
 * With roots, every path outside them gets one and the same answer, whether it exists, is a folder, a file or
 * nothing (distinct answers told any researcher which server paths exist); a missing path is placed by where its
 * existing components lead after symlinks. Inside the roots the answers say what is wrong.
 */
export function resolveImportFolder(input: string, roots: string[] | null): string {
  const realRoots = roots?.flatMap((r) => {
    try {
      return [fs.realpathSync(r)];
    } catch {
      return [];
    }
  });
  const outside = () =>
    new UserError(
      `${input} is not inside an import root (TOOLSMITH_IMPORT_ROOTS: ${roots?.join(':') || 'none'}), after symlinks`,
      { field: 'path' },
    );
  const inside = (real: string) => !realRoots || realRoots.some((root) => within(root, real));
  let real: string;
  try {
    real = fs.realpathSync(input);
  } catch {
    if (!inside(leadsTo(path.resolve(input)))) throw outside();
    throw new UserError(`no folder at ${input}`, { field: 'path' });
  }
  if (!inside(real)) throw outside();
  if (!fs.statSync(real).isDirectory()) throw new UserError(`${input} is not a folder`, { field: 'path' });
  return real;
}

function within(root: string, real: string): boolean {
  const rel = path.relative(root, real);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/**
 * Where an absolute path leads as far as it exists: each existing component resolved after symlinks (a dangling
 * link's target too), the missing rest appended; a loop of links stops where it was found.
 */
function leadsTo(abs: string, hops = 0): string {
  const parts = abs.split(path.sep).filter(Boolean);
  let at = path.parse(abs).root;
  for (const [i, part] of parts.entries()) {
    const next = path.join(at, part);
    let st: fs.Stats;
    try {
      st = fs.lstatSync(next);
    } catch {
      return path.join(next, ...parts.slice(i + 1));
    }
    if (st.isSymbolicLink()) {
      if (hops >= 40) return next;
      return leadsTo(path.resolve(at, fs.readlinkSync(next), ...parts.slice(i + 1)), hops + 1);
    }
    at = next;
  }
  return at;
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
