/**
 * The one way a name from a recipe, a request or a job becomes a path: a single NAME_RE segment joined to a
 * configured root (the data folder, the models folder), then resolved after symlinks and required to stay inside
 * the root. A name is never a path ("..", "/" and absolute paths fail the name check before the filesystem is
 * touched), and a symlink planted inside the root that leads outside it is refused. Errors name the field and the
 * rule, never quote a file and never say what lies at the far end of a link.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';
import { NAME_RE, NAME_RULE } from '../../contracts/names.ts';

export class PathEscapeError extends UserError {}

/** Whether `p` is `root` itself or below it (both already absolute and resolved). */
export function isInside(root: string, p: string): boolean {
  const rel = path.relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** realpath, or null when nothing is there (a dangling link counts as nothing: it leads nowhere to read). */
function real(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null;
    throw e;
  }
}

export interface UnderRootOptions {
  /** The input field the name came from, for the error ("model.name"). */
  field: string;
  /** What the root is, for the error ("the models folder"). */
  rootLabel: string;
  /** Also check each entry directly inside the resolved directory (a model's files): none may lead outside. */
  checkEntries?: boolean;
}

/**
 * `root/name` after symlinks, inside `root`. When nothing exists there yet the joined path is returned (callers
 * say "no model named …" or create it); a dangling link is refused like an escape, so it cannot be created through.
 */
export function resolveUnderRoot(root: string, name: string, opts: UnderRootOptions): string {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    throw new PathEscapeError(
      `${opts.field}: "${String(name).slice(0, 100)}" is not a name: ${NAME_RULE} (a name, never a path)`,
      { field: opts.field },
    );
  }
  const joined = path.join(root, name);
  const realRoot = real(root);
  if (realRoot === null) return joined; // no root yet: nothing under it either
  let isLink = false;
  try {
    isLink = fs.lstatSync(joined).isSymbolicLink();
  } catch {
    return joined;
  }
  const target = real(joined);
  if (target === null || !isInside(realRoot, target)) throw escape(name, opts, isLink);
  if (opts.checkEntries && fs.statSync(target).isDirectory()) {
    for (const entry of fs.readdirSync(target)) {
      const t = real(path.join(target, entry));
      if (t === null || !isInside(realRoot, t)) throw escape(`${name}/${entry}`, opts, true);
    }
  }
  return target;
}

function escape(what: string, opts: UnderRootOptions, link: boolean): PathEscapeError {
  return new PathEscapeError(
    `${opts.field}: "${what}" ${link ? 'is a link that leads' : 'resolves'} outside ${opts.rootLabel}; refused (only what lives inside it can be named)`,
    {
      field: opts.field,
      fix: `put the files themselves inside ${opts.rootLabel} (e.g. npx toolsmith model import DIR --name NAME copies them in)`,
    },
  );
}
