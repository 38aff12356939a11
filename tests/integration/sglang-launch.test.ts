// @no-database: runs once, not once per database.
// The SGLang rollout servers of a Ray run take the run's API key without it ever being in
// argv, which every user of a node can read: rayServerSpec starts them through workers/cluster/sglang_launch.py,
// which reads the key from the environment Ray's service actor passes. SGLang itself is not installed here (it needs
// GPUs), so the launcher is run for real up to the point where it imports SGLang, and its argument handling directly.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';
import { parseRecipe, type Recipe, type RecipeInput } from '../../contracts/recipe.ts';
import { rayServerSpec } from '../../workers/handlers/ray-rollout.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

const LAUNCH = path.resolve(import.meta.dirname, '../../workers/cluster/sglang_launch.py');
const KEY = 'k'.repeat(64);

const launch = (args: string[], env: Record<string, string>) =>
  spawnSync(trainerPython(), [LAUNCH, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env } as unknown as NodeJS.ProcessEnv,
    encoding: 'utf8',
  });

test("an SGLang server's spec: the launcher, the key's variable, and no key on the command line", () => {
  const recipe = parseRecipe({
    name: 'sglang-spec',
    model: { kind: 'model', name: 'm' },
    engine: { kind: 'ray', server: 'sglang', replicas: 2, gpusPerServer: 1 },
    stages: [{ type: 'sft', name: 'sft', data: { kind: 'generated', n: 4 } }],
  } as RecipeInput);
  const spec = rayServerSpec(recipe.engine as Extract<Recipe['engine'], { kind: 'ray' }>, '/w/v0', '/w', 'run_x');
  assert.equal(spec.argv[1], LAUNCH);
  assert.equal(spec.secretEnv, 'TOOLSMITH_SGLANG_API_KEY');
  assert.ok(!spec.argv.some((a) => a.startsWith('--api-key')), spec.argv.join(' '));
  assert.deepEqual(spec.argv.slice(spec.argv.indexOf('--model-path'), spec.argv.indexOf('--model-path') + 2), [
    '--model-path',
    '/w/v0',
  ]);
});

test('the launcher refuses a key in argv and a missing or short key, naming why; with a key it goes on to SGLang', () => {
  const inArgv = launch(['--model-path', 'x', '--api-key', KEY], { TOOLSMITH_SGLANG_API_KEY: KEY });
  assert.equal(inArgv.status, 2);
  assert.match(inArgv.stderr, /--api-key: give the key in TOOLSMITH_SGLANG_API_KEY, never on the command line/);
  const missing = launch(['--model-path', 'x'], {});
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /TOOLSMITH_SGLANG_API_KEY: the run's API key is missing/);
  const short = launch(['--model-path', 'x'], { TOOLSMITH_SGLANG_API_KEY: 'abc' });
  assert.equal(short.status, 2);
  // A good key passes the checks; this machine has no SGLang, which the launcher names.
  const ok = launch(['--model-path', 'x'], { TOOLSMITH_SGLANG_API_KEY: KEY });
  assert.equal(ok.status, 3, ok.stderr);
  assert.match(ok.stderr, /SGLang is not installed on this node/);
});

test("the server's arguments get the key from the environment, after everything given", () => {
  const r = spawnSync(
    trainerPython(),
    [
      '-c',
      `import json, sys; sys.path.insert(0, ${JSON.stringify(path.dirname(LAUNCH))}); import sglang_launch as s; print(json.dumps(s.server_argv(["--port", "1"], {"TOOLSMITH_SGLANG_API_KEY": ${JSON.stringify(KEY)}})))`,
    ],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ['--port', '1', '--api-key', KEY]);
});
