/**
 * The dependency rules of docs/architecture.md "Layers and their rules", checked on every import of every source file:
 *   contracts/  imports only zod (and contracts/);
 *   components/ imports only contracts/ and lib/ (and components/, and npm packages for the browser);
 *   lib/        imports contracts/, lib/ and, as a type only, the tRPC router's type;
 *   app/        imports components/, lib/, contracts/; only the tRPC HTTP handler (app/api/) reaches server/;
 *   server/     never imports workers/, cli/, components/, app/ or lib/;
 *   workers/    import contracts/, workers/ and server's data layer (server/db/, server/store/, server/datasets/ (the
 *               import of problem sets into the store), server/models/ (the models folder: a name to its directory),
 *               server/imports/ (the folder of a run trained elsewhere, checked against the import roots), config, ids,
 *               errors);
 *   processes   (the worker loop, sandbox pools and nodes, engines, engine servers, the trainer) are assembled only
 *               by cli/ and the worker's entry point and job handlers (workers/main.ts, workers/handlers/).
 * One floor down:
 *   server/auth/ imports nothing of server/trpc/ (the roles and the principal are contracts/access.ts's);
 *   no loop between the folders of components/ or of workers/ (folderLoops: a folder's imports, type-only ones
 *               included, never lead back to it), and no loop between files anywhere (fileLoops).
 * A failure names the file, the line and the offending import.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

const ROOT = path.resolve(import.meta.dirname, '../..');
const LAYERS = ['contracts', 'components', 'lib', 'app', 'server', 'cli', 'workers'];

interface Import {
  file: string;
  line: number;
  spec: string;
  target: string | null;
  typeOnly: boolean;
}

function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const rel = path.join(d, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'generated' && e.name !== 'node_modules') walk(rel);
      } else if (/\.(ts|tsx|mjs)$/.test(e.name)) out.push(rel);
    }
  };
  if (fs.existsSync(path.join(ROOT, dir))) walk(dir);
  return out;
}

/** Every static import, re-export and dynamic import of a file, resolved to a repo path when it is the project's. */
export function importsOf(file: string, text: string): Import[] {
  const out: Import[] = [];
  const re =
    /(?:^|\n)\s*(import|export)(\s+type)?\s[^'";]*?from\s*['"]([^'"]+)['"]|(?:^|\n)\s*import\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of text.matchAll(re)) {
    const spec = m[3] ?? m[4] ?? m[5]!;
    const line = text.slice(0, m.index! + m[0].length).split('\n').length;
    let target: string | null = null;
    if (spec.startsWith('@/')) target = spec.slice(2);
    else if (spec.startsWith('.')) target = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), spec));
    out.push({ file, line, spec, target, typeOnly: Boolean(m[2]) });
  }
  return out;
}

const layerOf = (p: string) => p.split('/')[0]!;
const under = (p: string, ...prefixes: string[]) =>
  prefixes.some((x) => p === x || p.startsWith(x.endsWith('/') ? x : `${x}/`));

/** Modules whose use starts a process (or a pool of them): only the composition roots may construct them. */
const ASSEMBLERS = [
  'workers/worker.ts',
  'workers/sandbox/index.ts',
  'workers/sandbox/pool.ts',
  'workers/sandbox/http-node.ts',
  'workers/engines/create.ts',
  'workers/engines/onnx-engine.ts',
  'workers/engines/openai-server.ts',
  'workers/trainer/client.ts',
];
const COMPOSITION_ROOTS = ['cli', 'workers/main.ts', 'workers/handlers'];
const DATA_LAYER = [
  'server/db',
  'server/store',
  'server/datasets',
  'server/models',
  'server/imports',
  'server/config.ts',
  'server/ids.ts',
  'server/errors.ts',
];

/** The rule an import breaks, or null. */
export function violation(i: Import): string | null {
  const from = layerOf(i.file);
  if (i.target === null) {
    if (from === 'contracts' && i.spec !== 'zod') return 'contracts/ imports only zod';
    if (from === 'components' && i.spec.startsWith('node:')) return 'components/ run in the browser: no node: modules';
    return null;
  }
  const to = i.target;
  const toLayer = layerOf(to);
  switch (from) {
    case 'contracts':
      return toLayer === 'contracts' ? null : 'contracts/ imports only zod';
    case 'components':
      return ['contracts', 'lib', 'components'].includes(toLayer)
        ? null
        : 'components/ imports only contracts/ and lib/';
    case 'lib':
      return ['contracts', 'lib'].includes(toLayer) || (i.typeOnly && under(to, 'server/trpc'))
        ? null
        : 'lib/ imports contracts/ (and the router type only)';
    case 'app':
      if (['contracts', 'lib', 'components', 'app'].includes(toLayer)) return null;
      if (toLayer === 'server' && (under(i.file, 'app/api') || (i.typeOnly && under(to, 'server/trpc')))) return null;
      return 'app/ renders components; only app/api/ (the tRPC handler) reaches server/';
    case 'server':
      return ['contracts', 'server'].includes(toLayer)
        ? null
        : 'server/ imports only contracts/ (never workers/, cli/ or the UI)';
    case 'workers':
      if (toLayer === 'contracts') return null;
      if (toLayer === 'server')
        return under(to, ...DATA_LAYER)
          ? null
          : "workers/ import only server's data layer (db, store, datasets, models, imports, config, ids, errors)";
      if (toLayer !== 'workers') return 'workers/ import only contracts/, workers/ and the data layer';
      break;
    case 'cli':
      if (!['contracts', 'server', 'workers', 'cli'].includes(toLayer))
        return 'cli/ composes contracts/, server/ and workers/';
  }
  if (
    !i.typeOnly &&
    ASSEMBLERS.includes(to) &&
    !under(i.file, ...COMPOSITION_ROOTS) &&
    path.dirname(i.file) !== path.dirname(to)
  ) {
    return `only cli/ and the worker's job handlers assemble processes (${to})`;
  }
  return null;
}

/**
 * The import loops between the folders directly under `top` (a file directly in `top` is a unit of its own): every
 * group of folders that reach each other through imports (a strongly connected component of the folder graph), each
 * named with the folder-to-folder imports that close it (the first file:line of each). Empty when the folders form a
 * one-way graph.
 */
export function folderLoops(top: string, imports: Import[]): string[] {
  const folderOf = (p: string) => {
    const rest = p.slice(top.length + 1).split('/');
    return rest.length > 1 ? `${top}/${rest[0]}` : p;
  };
  const edges = new Map<string, Map<string, Import[]>>();
  for (const i of imports) {
    if (i.target === null || !under(i.file, top) || !under(i.target, top)) continue;
    const [a, b] = [folderOf(i.file), folderOf(i.target)];
    if (a === b) continue;
    if (!edges.has(a)) edges.set(a, new Map());
    const to = edges.get(a)!;
    if (!to.has(b)) to.set(b, []);
    to.get(b)!.push(i);
  }
  const groups = loopsOf(edges);
  return groups.map((g) => {
    const closing = g.flatMap((a) =>
      g
        .filter((b) => b !== a && edges.get(a)?.has(b))
        .map((b) => {
          const [first, ...more] = edges.get(a)!.get(b)!;
          return `${a} → ${b} (${first!.file}:${first!.line} imports '${first!.spec}'${more.length ? `, +${more.length} more` : ''})`;
        }),
    );
    return `a loop between ${g.join(', ')}: ${closing.join('; ')}`;
  });
}

/** Tarjan's strongly connected components of a graph given by its edges: each group of two or more, sorted. */
function loopsOf(edges: Map<string, Map<string, Import[]>>): string[][] {
  const index = new Map<string, number>(),
    low = new Map<string, number>(),
    stack: string[] = [],
    onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of [...(edges.get(v)?.keys() ?? [])].sort()) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return groups;
}

/**
 * The import loops between files (type-only imports included: a loop of types is still two files that cannot be
 * read one without the other), each named with its files and the first import of each step.
 */
export function fileLoops(imports: Import[]): string[] {
  const edges = new Map<string, Map<string, Import[]>>();
  for (const i of imports) {
    if (i.target === null || i.target === i.file) continue;
    if (!edges.has(i.file)) edges.set(i.file, new Map());
    const to = edges.get(i.file)!;
    if (!to.has(i.target)) to.set(i.target, []);
    to.get(i.target)!.push(i);
  }
  return loopsOf(edges).map(
    (g) =>
      `a loop between ${g.join(', ')}: ${g
        .flatMap((a) =>
          g
            .filter((b) => edges.get(a)?.has(b))
            .map((b) => `${edges.get(a)!.get(b)![0]!.file}:${edges.get(a)!.get(b)![0]!.line} → ${b}`),
        )
        .join('; ')}`,
  );
}

const importsUnder = (top: string): Import[] =>
  sources(top).flatMap((file) => importsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8')));

test('every import follows the layer rules', () => {
  const bad: string[] = [];
  let n = 0;
  for (const layer of LAYERS) {
    for (const file of sources(layer)) {
      for (const i of importsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8'))) {
        n++;
        const v = violation(i);
        if (v) bad.push(`${file}:${i.line} imports '${i.spec}': ${v}`);
      }
    }
  }
  assert.ok(n > 500, `only ${n} imports found: the scan is broken`);
  assert.deepEqual(bad, [], `\n${bad.join('\n')}`);
});

test('the rules catch what they forbid', () => {
  const v = (file: string, spec: string, typeOnly = false) =>
    violation(importsOf(file, `import ${typeOnly ? 'type ' : ''}{ x } from '${spec}';`)[0]!);
  assert.match(v('server/x.ts', '../workers/sandbox/pool.ts')!, /server\/ imports only contracts/);
  assert.match(v('contracts/x.ts', 'node:fs')!, /only zod/);
  assert.match(v('contracts/x.ts', '../server/config.ts')!, /only zod/);
  assert.match(v('components/a/b.tsx', '../../server/store/runs.ts')!, /components\/ imports only/);
  assert.match(v('components/a/b.tsx', '@/workers/rollout/live.ts')!, /components\/ imports only/);
  assert.match(v('workers/a/b.ts', '../../server/lifecycle.ts')!, /data layer/);
  assert.match(v('workers/train/x.ts', '../trainer/client.ts')!, /assemble processes/);
  assert.match(v('server/x.ts', '../cli/train.ts')!, /server\/ imports only/);
  assert.match(v('app/runs/[id]/page.tsx', '@/server/store/runs.ts')!, /only app\/api/);
  assert.equal(v('workers/train/x.ts', '../trainer/client.ts', true), null, 'a type-only import assembles nothing');
  assert.equal(v('workers/handlers/x.ts', '../trainer/client.ts'), null);
  assert.equal(v('components/a/b.tsx', '../../contracts/recipe.ts'), null);
  assert.equal(v('lib/trpc.ts', '@/server/trpc/root.ts', true), null);
  assert.equal(v('contracts/x.ts', 'zod'), null);
  assert.deepEqual(
    importsOf('a/b.ts', "const m = await import('./c.ts');").map((i) => i.target),
    ['a/c.ts'],
  );
});

test("server/auth/ imports nothing of server/trpc/ (the shapes they share are contracts/access.ts's)", () => {
  const bad = importsUnder('server/auth').filter((i) => i.target !== null && under(i.target, 'server/trpc'));
  assert.deepEqual(
    bad.map((i) => `${i.file}:${i.line} imports '${i.spec}'`),
    [],
  );
});

test('no import loop between the folders of components/', () => {
  assert.deepEqual(folderLoops('components', importsUnder('components')), []);
});

test('no import loop between the folders of workers/', () => {
  assert.deepEqual(folderLoops('workers', importsUnder('workers')), []);
});

test('no import loop between files, in any folder', () => {
  const all = LAYERS.flatMap((layer) =>
    sources(layer).flatMap((file) =>
      importsOf(file, fs.readFileSync(path.join(ROOT, file), 'utf8')).map((i) => ({
        ...i,
        // An import names the file with its extension, as the sources do; a folder import names its index.
        target: i.target && !/\.(ts|tsx|mjs)$/.test(i.target) ? `${i.target}/index.ts` : i.target,
      })),
    ),
  );
  assert.deepEqual(fileLoops(all), []);
});

test('fileLoops finds a loop of files, type-only imports included, and not a one-way chain', () => {
  const imp = (file: string, spec: string, typeOnly = false) =>
    importsOf(file, `import ${typeOnly ? 'type ' : ''}{ x } from '${spec}';`)[0]!;
  const loop = [
    imp('contracts/recipe.ts', './recipe-bounds.ts'),
    imp('contracts/recipe-bounds.ts', './recipe.ts', true),
  ];
  assert.deepEqual(fileLoops(loop), [
    'a loop between contracts/recipe-bounds.ts, contracts/recipe.ts: contracts/recipe-bounds.ts:1 → contracts/recipe.ts; contracts/recipe.ts:1 → contracts/recipe-bounds.ts',
  ]);
  assert.deepEqual(fileLoops(loop.slice(0, 1)), []);
  assert.deepEqual(
    fileLoops([imp('cli/a.ts', './b.ts'), imp('cli/b.ts', './c.ts'), imp('cli/c.ts', './a.ts')]).length,
    1,
    'a loop of three',
  );
});

test('folderLoops finds a loop between folders and names the imports that close it', () => {
  const imp = (file: string, spec: string) => importsOf(file, `import { x } from '${spec}';`)[0]!;
  const loop = [
    imp('components/a/x.tsx', '../b/y.tsx'),
    imp('components/b/y.tsx', '../c/z.tsx'),
    imp('components/c/z.tsx', '../a/w.tsx'),
    imp('components/c/z.tsx', '../ui/f.ts'),
  ];
  assert.deepEqual(folderLoops('components', loop), [
    "a loop between components/a, components/b, components/c: components/a → components/b (components/a/x.tsx:1 imports '../b/y.tsx'); " +
      "components/b → components/c (components/b/y.tsx:1 imports '../c/z.tsx'); components/c → components/a (components/c/z.tsx:1 imports '../a/w.tsx')",
  ]);
  assert.deepEqual(folderLoops('components', loop.slice(0, 2)), [], 'a one-way chain is no loop');
  assert.deepEqual(
    folderLoops('workers', [
      imp('workers/a/x.ts', './y.ts'),
      imp('workers/main.ts', './a/x.ts'),
      imp('workers/a/x.ts', '../types.ts'),
    ]),
    [],
    'imports inside one folder, or to and from files at the top, are no loop',
  );
  assert.equal(
    folderLoops('workers', [imp('workers/eval/run.ts', '../train/t.ts'), imp('workers/train/s.ts', '../eval/r.ts')])
      .length,
    1,
  );
});

test('every query is in a store: no raw database call outside server/store/ and server/db/', () => {
  const raw = /\.prisma\.|\bdb\.(query|execute)\(|\$queryRaw|\$executeRaw|\$transaction|new PrismaClient/;
  const bad: string[] = [];
  for (const layer of ['server', 'cli', 'workers']) {
    for (const file of sources(layer)) {
      if (file.startsWith('server/store/') || file.startsWith('server/db/')) continue;
      const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
      text.split('\n').forEach((line, i) => {
        if (raw.test(line)) bad.push(`${file}:${i + 1}: ${line.trim()}`);
      });
      for (const imp of importsOf(file, text))
        if (imp.target === 'server/db/batch.ts') bad.push(`${file}:${imp.line}: imports server/db/batch.ts`);
    }
  }
  assert.deepEqual(bad, [], `queries belong in server/store/<entity>.ts:\n${bad.join('\n')}`);
});

test('the importer names no format: each format reads its side files through its hooks (workers/imports/side-files.ts)', async () => {
  const { FOREIGN_FORMATS } = await import('../../contracts/foreign.ts');
  const text = fs.readFileSync(path.join(ROOT, 'workers/imports/importer.ts'), 'utf8');
  const named = FOREIGN_FORMATS.filter((f) => new RegExp(`['"\`]${f}['"\`]`).test(text));
  assert.deepEqual(named, []);
  assert.doesNotMatch(text, /harbor|token_exports|metrics\.jsonl/i);
});

test('workers/ start the CLI only through workers/handlers/cli-entries.ts, and each entry it names is a CLI command', async () => {
  const bad = sources('workers')
    .filter((f) => f !== 'workers/handlers/cli-entries.ts')
    .flatMap((f) =>
      fs
        .readFileSync(path.join(ROOT, f), 'utf8')
        .split('\n')
        .flatMap((line, i) => (/bin\/toolsmith\.mjs|['"]\.\.\/\.\.\/bin\//.test(line) ? [`${f}:${i + 1}`] : [])),
    );
  assert.deepEqual(bad, []);
  const { CLI_ENTRIES, TOOLSMITH_BIN } = await import('../../workers/handlers/cli-entries.ts');
  const { commands } = await import('../../cli/commands.ts');
  const names = new Set(commands.map((c) => c.name));
  for (const [entry, command] of Object.entries(CLI_ENTRIES)) assert.ok(names.has(command), `${entry}: ${command}`);
  assert.ok(fs.existsSync(TOOLSMITH_BIN), TOOLSMITH_BIN);
});
