/**
 * The repository's own text files, for the checks that read every file (tests/unit/doc-citations.test.ts,
 * tests/unit/source-comments.test.ts): the folders and root files below, walked on disk, without node_modules,
 * .next, data, generated code, build output or Python caches, and without files of 2 MB or more.
 */
import fs from 'node:fs';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

/** The project's top-level folders (what a repository-relative path starts with). */
export const FOLDERS = [
  '.ci',
  'app',
  'bench',
  'bin',
  'cli',
  'components',
  'contracts',
  'docs',
  'e2e',
  'lib',
  'prisma',
  'public',
  'scripts',
  'server',
  'tests',
  'workers',
];
/** Files at the root that are read as well. */
const ROOT_FILES = [
  'README.md',
  'biome.jsonc',
  'next.config.js',
  'package.json',
  'playwright.config.ts',
  'proxy.ts',
  'tsconfig.json',
];
const SKIPPED_DIRS = new Set(['node_modules', '.next', 'data', 'generated', 'out', '__pycache__', '.venv']);
const TEXT_EXT = /\.(ts|tsx|mts|mjs|cjs|js|py|md|prisma|sql|json|jsonc|jsonl|csv|svg|sh|toml|txt|css)$|(^|\/)run$/;

/** Every scanned file, repository-relative with `/`, sorted. */
export function scannedFiles(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    const abs = path.join(ROOT, rel);
    if (!fs.existsSync(abs)) return;
    const st = fs.statSync(abs);
    if (st.isFile()) {
      if (TEXT_EXT.test(rel) && st.size < 2_000_000) out.push(rel.split(path.sep).join('/'));
      return;
    }
    for (const e of fs.readdirSync(abs, { withFileTypes: true })) {
      if (e.isDirectory() && SKIPPED_DIRS.has(e.name)) continue;
      if (e.isDirectory() || e.isFile()) walk(path.join(rel, e.name));
    }
  };
  for (const s of [...ROOT_FILES, ...FOLDERS]) walk(s);
  return out.sort();
}

/** The 1-based line of `index` in `text`. */
export const lineOf = (text: string, index: number) => text.slice(0, index).split('\n').length;
