/**
 * Which zygote a call needs. Forking costs in proportion to the zygote's memory (page tables: ~80 MB with
 * numpy+sympy+scipy against ~10 MB without), and most tool calls are plain arithmetic, so the pool keeps a
 * light zygote beside each heavy one. Pure and conservative: a call goes to the light one only when every module
 * it imports is one the light zygote has preloaded and it has no way to import dynamically. A wrong guess can
 * only cost time (the module gets imported in the child), never change what the code does.
 */

/** Standard-library modules both zygotes import up front; cheap, and all a light call may import. */
export const STDLIB_PRELOAD = [
  'math',
  'cmath',
  'fractions',
  'decimal',
  'itertools',
  'functools',
  'collections',
  'random',
  're',
  'statistics',
  'string',
  'heapq',
  'bisect',
  'operator',
  'numbers',
  'copy',
  'os',
  'sys',
  'time',
];

export const HEAVY_PRELOAD = ['numpy', 'sympy', 'scipy', 'scipy.special'];

const LIGHT = new Set(STDLIB_PRELOAD);
const DYNAMIC = /__import__|importlib|\bexec\s*\(|\beval\s*\(|\bcompile\s*\(|\bpickle\b|\bmarshal\b|\brunpy\b/;
const IMPORT_LINE = /^[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([^#\n;]+))/gm;

/** Module roots named by `import x, y.z as w` / `from x.y import z` statements (also inside blocks). */
export function importedRoots(code: string): string[] {
  const roots: string[] = [];
  for (const m of code.matchAll(IMPORT_LINE)) {
    if (m[1]) roots.push(m[1].split('.')[0]);
    else
      for (const part of m[2].split(',')) {
        const name = part.trim().split(/\s+/)[0];
        if (name) roots.push(name.replace(/[()\\]/g, '').split('.')[0]);
      }
  }
  // `import a; import b` on one line: the first statement is caught above, the rest here.
  for (const m of code.matchAll(/;[ \t]*(?:from[ \t]+([\w.]+)[ \t]+import\b|import[ \t]+([\w., \t]+))/g)) {
    if (m[1]) roots.push(m[1].split('.')[0]);
    else for (const part of m[2].split(',')) roots.push(part.trim().split(/\s+/)[0].split('.')[0]);
  }
  return roots.filter(Boolean);
}

export function zygoteKind(code: string, history: string[] = []): 'light' | 'heavy' {
  for (const src of [...history, code]) {
    if (DYNAMIC.test(src)) return 'heavy';
    if (importedRoots(src).some((r) => !LIGHT.has(r))) return 'heavy';
  }
  return 'light';
}
