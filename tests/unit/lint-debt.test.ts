/**
 * Biome's debt list stays true (biome.jsonc): every rule that still warns (or informs) anywhere is listed there with
 * the number of places it does, and a rule whose places are all fixed leaves the list (back to an error). A change
 * that adds a warning therefore says so in biome.jsonc, and one that retires the last place of a rule sees this fail
 * until the rule is an error again.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { ROOT } from '../helpers/source-files.ts';

test("every rule that still warns is listed as debt in biome.jsonc with its count, and no rule that doesn't", () => {
  const r = spawnSync(
    path.join(ROOT, 'node_modules/.bin/biome'),
    ['lint', '--colors=off', '--reporter=json', '--max-diagnostics=10000', '.'],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20 },
  );
  const report = JSON.parse(r.stdout) as { diagnostics: { category: string; severity: string }[] };
  const found = new Map<string, number>();
  for (const d of report.diagnostics) {
    if (!d.category.startsWith('lint/')) continue;
    const rule = d.category.split('/').at(-1)!;
    found.set(rule, (found.get(rule) ?? 0) + 1);
  }
  const config = fs.readFileSync(path.join(ROOT, 'biome.jsonc'), 'utf8');
  const listed = new Map(
    [...config.matchAll(/"(\w+)": "(?:warn|info)",? \/\/ (\d+)/g)].map((m) => [m[1]!, Number(m[2])] as const),
  );
  const sorted = (m: Map<string, number>) => Object.fromEntries([...m].sort(([a], [b]) => a.localeCompare(b)));
  assert.deepEqual(
    sorted(listed),
    sorted(found),
    'biome.jsonc\'s debt list (rule: "warn", // count) against biome lint',
  );
});
