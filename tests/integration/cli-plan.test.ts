// @no-database: runs once, not once per database (the CLI gets a SQLite file of its own).
// `npx toolsmith plan` as a researcher runs it: the report's recipe on the report's cluster as JSON with
// the fields a script reads, the simulation's tables and chart, and the errors that name their flag.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
let dir = '';
let env: NodeJS.ProcessEnv;
const cli = (args: string[]) => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/toolsmith.mjs'), 'plan', ...args], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
};

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-plan-'));
  env = { ...process.env, TOOLSMITH_DATA_DIR: dir, DATABASE_URL: '' };
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('plan --json: the report recipe on the report cluster, with the fields a script reads', () => {
  const r = cli(['--recipe', 'rstar2-qwen3-14b', '--cluster', 'report', '--params', '14.8e9', '--json']);
  assert.equal(r.code, 0, r.err);
  const plan = JSON.parse(r.out) as Record<string, unknown>;
  for (const key of ['stepSeconds', 'toolCallsPerStep', 'sandboxCores', 'gpuHours', 'storageBytesPerStep'])
    assert.ok(typeof plan[key] === 'number' && (plan[key] as number) > 0, `${key}: ${plan[key]}`);
  assert.ok(['rollout', 'train', 'sync', 'overhead'].includes(plan.boundBy as string), String(plan.boundBy));
});

test('plan --simulate: async against turn-synchronous dispatch and the executor sweep, as tables and a chart', () => {
  const r = cli(['--recipe', 'embedded-arith', '--cluster', 'local', '--simulate']);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /\| rl-stage-1 \| async \|/);
  assert.match(r.out, /\| rl-stage-1 \| turn-synchronous \|/);
  const chart = r.out.slice(r.out.indexOf('the step by sandbox executors'));
  const bars = chart.split('\n').filter((l) => /^ +(\d[\d,]* executors|turn-synchronous) [█░]+ /.test(l));
  assert.ok(bars.length >= 5, chart);
  // Each bar is as long as its step against the longest (40 cells).
  assert.ok(
    bars.some((l) => (l.match(/[█░]+/)?.[0].length ?? 0) === 40),
    chart,
  );
});

test('plan: a flag given wrong is named in the error', () => {
  const noCluster = cli(['--recipe', 'embedded-arith']);
  assert.notEqual(noCluster.code, 0);
  assert.match(noCluster.err, /--cluster: name a preset \(local, h200, report\) or a JSON file/);
  const badParams = cli(['--recipe', 'rstar2-qwen3-14b', '--cluster', 'report', '--params', 'lots']);
  assert.match(badParams.err, /--params: a positive number, not "lots"/);
  const unknown = cli(['--recipe', 'no-such-recipe', '--cluster', 'local']);
  assert.match(unknown.err, /--recipe: no recipe named no-such-recipe/);
});
