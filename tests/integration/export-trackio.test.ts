// `npx toolsmith export RUN --to trackio` against the real database and Trackio's real local store (the pinned
// `trackio` in the trainer's Python): a native run (recipe, metrics by step, a tool-using trajectory and an evaluation
// one) and the same run imported back from ATIF are exported, then read back through Trackio's own SQLiteStorage and
// compared with the database: the config, every metric value at its step, a trace per trajectory with its messages
// and a span per turn and per tool call (times where the source kept them). A second export of a run is refused, and
// bad flags are named.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { Trajectory } from '../../contracts/trajectory.ts';
import type { Database } from '../../server/db/client.ts';
import { launchImport } from '../../server/imports/launch.ts';
import { insertMetricPoints, listMetricKeys, readSeriesOfKeys } from '../../server/store/metrics.ts';
import { createRun } from '../../server/store/runs.ts';
import { insertTrajectories } from '../../server/store/trajectories.ts';
import { exportRunAtif } from '../../workers/imports/export.ts';
import { importPass } from '../../workers/imports/importer.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S, toolResponseTurn } from '../../workers/rollout/template.ts';
import { toTrajectoryInput } from '../../workers/rollout/to-store.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  finishTrajectory,
  newTrajectory,
} from '../../workers/rollout/trajectory.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import { freshDatabase } from '../helpers/db.ts';
import { runCli } from '../helpers/proc.ts';

const PY = trainerPython();
const skip =
  spawnSync(PY, ['-c', 'import trackio'], { stdio: 'ignore' }).status === 0
    ? false
    : `needs ${PY} with trackio (node scripts/setup.mjs builds it)`;

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let dir: string;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-trackio-'));
});
afterEach(async () => {
  await fresh.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const T0 = 1_700_000_000_000;

/** A trajectory as the agent loop builds it: a python call and its result, then the answer (or only the answer). */
function trajectory(prompt: string, withTool: boolean): Trajectory {
  let t = newTrajectory(prompt, 10);
  if (withTool) {
    const call = `Compute.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code: 'print(6*7)', input: '' } })}\n</tool_call>`;
    t = appendAssistantTurn(
      t,
      {
        text: call,
        tokens: 30,
        tokenIds: null,
        logprobs: null,
        engineFinish: 'stop',
        genStartedAt: T0,
        genFinishedAt: T0 + 500,
      },
      S,
    );
    const appended = toolResponseTurn('42', S);
    t = appendToolResult(t, {
      name: 'python',
      arguments: { code: 'print(6*7)', input: '' },
      status: 'ok',
      text: '42',
      appendedText: appended,
      tokens: 5,
      appended: true,
      queuedAt: T0 + 600,
      startedAt: T0 + 650,
      finishedAt: T0 + 750,
      durationMs: 100,
      queueMs: 50,
    });
  }
  const answer = 'So it is 42.</reason>\n<answer>\\boxed{42}</answer>';
  t = appendAssistantTurn(
    t,
    {
      text: answer,
      tokens: 12,
      tokenIds: null,
      logprobs: null,
      engineFinish: 'stop',
      genStartedAt: T0 + 800,
      genFinishedAt: T0 + 900,
    },
    S,
  );
  return finishTrajectory(t, 'no_tool_call', T0 + 1000);
}

const RECIPE = { name: 'trackio-export', rl: { steps: 3, groupSize: 2 } };

async function seedNativeRun(): Promise<string> {
  const run = await createRun(db, { name: 'to trackio', kind: 'train', recipeSpec: RECIPE, seed: 7 });
  const points = [
    ...[1, 2, 3].map((step) => ({ runId: run.id, key: 'rollout/accuracy', step, value: step / 4 })),
    ...[1, 3].map((step) => ({ runId: run.id, key: 'train/loss', step, value: 1 / step })),
  ];
  await insertMetricPoints(db, points);
  const scored = {
    reward: 1,
    correct: true,
    verdict: { correct: true, method: 'exact' as const, extracted: '42', reason: 'equal' },
  };
  const meta = (step: number, split: string, sampleIndex: number) => ({
    runId: run.id,
    step,
    stage: 0,
    split,
    problemId: 'p1',
    groupId: 'g0',
    sampleIndex,
  });
  await insertTrajectories(db, [
    toTrajectoryInput(trajectory('What is 6*7?', true), scored, meta(2, 'train', 0)),
    toTrajectoryInput(trajectory('What is 6*7?', false), scored, meta(3, 'eval', 0)),
  ]);
  return run.id;
}

interface ReadBack {
  runs: string[];
  config: Record<string, unknown>;
  logs: Record<string, unknown>[];
  traces: {
    key: string;
    step: number;
    messages: { role: string; content: string }[];
    metadata: Record<string, unknown>;
    spans: { kind: string; name: string; start_time?: string; end_time?: string; status: string }[];
  }[];
}

/** What Trackio's own storage holds for one run of a project. */
function readBack(project: string, run: string): ReadBack {
  const script = `
import json, sys
from trackio.sqlite_storage import SQLiteStorage as S
p, r = sys.argv[1], sys.argv[2]
print(json.dumps({"runs": S.get_runs(p), "config": S.get_run_config(p, r), "logs": S.get_logs(p, r),
  "traces": S.get_traces(p, r)}))`;
  const out = spawnSync(PY, ['-c', script, project, run], {
    env: { ...process.env, TRACKIO_DIR: dir, HF_HUB_OFFLINE: '1' },
    encoding: 'utf8',
  });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').pop()!);
}

/** Trackio's log rows as step → the metric values logged at it. */
function metricsOf(logs: Record<string, unknown>[]): Record<number, Record<string, unknown>> {
  const out: Record<number, Record<string, unknown>> = {};
  for (const l of logs)
    for (const [k, v] of Object.entries(l))
      if (k !== 'step' && k !== 'timestamp') out[l.step as number] = { ...out[l.step as number], [k]: v };
  return out;
}

async function exportTo(runId: string, project: string) {
  return runCli(['export', runId, '--to', 'trackio', '--project', project, '--dir', dir], {
    DATABASE_URL: fresh.url,
  });
}

test('a native run and its ATIF re-import, exported to Trackio, read back through Trackio as stored', {
  skip,
}, async () => {
  const runId = await seedNativeRun();
  const r = await exportTo(runId, 'native');
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    new RegExp(`wrote run ${runId} into Trackio project native .*: 5 metric values, 2 trajectories as traces`),
  );
  const got = readBack('native', runId);
  assert.deepEqual(got.runs, [runId]);
  assert.deepEqual(got.config.recipe, RECIPE);
  assert.deepEqual(
    { ...(got.config.toolsmith as object), createdAt: undefined },
    {
      runId,
      name: 'to trackio',
      kind: 'train',
      status: 'queued',
      seed: 7,
      codeVersion: (got.config.toolsmith as { codeVersion: string }).codeVersion,
      createdAt: undefined,
    },
  );
  // Every metric value at its step, as the database has it (a trace's own log row holds no metric).
  const byStep = metricsOf(got.logs);
  assert.deepEqual(byStep, {
    1: { 'rollout/accuracy': 0.25, 'train/loss': 1 },
    2: { 'rollout/accuracy': 0.5 },
    3: { 'rollout/accuracy': 0.75, 'train/loss': 1 / 3 },
  });
  const train = got.traces.find((t) => t.key === 'trajectories/train')!;
  const evalTrace = got.traces.find((t) => t.key === 'trajectories/eval')!;
  assert.equal(got.traces.length, 2);
  assert.equal(train.step, 2);
  assert.deepEqual(
    train.messages.map((m) => m.role),
    ['user', 'assistant', 'tool', 'assistant'],
  );
  assert.equal(train.messages[2]!.content, '42');
  assert.deepEqual(
    train.spans.map((s) => [s.kind, s.name, s.start_time, s.end_time, s.status]),
    [
      ['generation', 'turn 0', new Date(T0).toISOString(), new Date(T0 + 500).toISOString(), 'success'],
      ['tool', 'python', new Date(T0 + 650).toISOString(), new Date(T0 + 750).toISOString(), 'success'],
      ['generation', 'turn 1', new Date(T0 + 800).toISOString(), new Date(T0 + 900).toISOString(), 'success'],
    ],
  );
  assert.deepEqual(
    [train.metadata.reward, train.metadata.correct, train.metadata.answer, train.metadata.split],
    [1, true, '42', 'train'],
  );
  assert.equal(evalTrace.spans.length, 1, 'one turn, no tool call');

  // The same run imported back from ATIF exports too: its traces have the same messages and span kinds (ATIF keeps
  // no time per tool result: that span has none rather than a made-up one).
  const atif = path.join(dir, 'atif');
  await exportRunAtif(db, runId, atif, { name: 'toolsmith', version: 'test' });
  const back = await launchImport(db, { path: atif }, { roots: null, enqueue: false });
  await importPass({ db, runId: back.runId, folder: back.folder, format: 'atif' });
  const ri = await exportTo(back.runId, 'imported');
  assert.equal(ri.code, 0, ri.stderr);
  const imp = readBack('imported', back.runId);
  // An import derives its own metrics by step (accuracy, turns, tool calls): those, as the database has them.
  const stored = await readSeriesOfKeys(db, back.runId, await listMetricKeys(db, back.runId));
  const expected: Record<number, Record<string, number>> = {};
  for (const [key, points] of Object.entries(stored))
    for (const p of points) expected[p.step] = { ...expected[p.step], [key]: p.value };
  assert.ok(Object.keys(stored).length > 0);
  assert.deepEqual(metricsOf(imp.logs), expected);
  const impTrain = imp.traces.find((t) => t.key === 'trajectories/train')!;
  const said = (m: { role: string; content: string }) => [m.role, m.content];
  assert.deepEqual(impTrain.messages.map(said), train.messages.map(said));
  assert.deepEqual(
    impTrain.spans.map((s) => s.kind),
    ['generation', 'tool', 'generation'],
  );
  assert.equal(impTrain.spans[1]!.start_time, undefined);
  assert.equal(impTrain.metadata.trajectoryId !== train.metadata.trajectoryId, true);

  // Exporting the run again into the same project is refused (a second run of that name), naming RUN.
  const again = await exportTo(runId, 'native');
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /project native already holds run \S+; not written again/);
  assert.equal(readBack('native', runId).traces.length, 2);
});

test('export --to: bad flags are named before anything is written', async () => {
  const runId = (await createRun(db, { name: 'flags', kind: 'train' })).id;
  const env = { DATABASE_URL: fresh.url };
  const cases: [string[], RegExp][] = [
    [['--to', 'wandb'], /--to: one of trackio \(got "wandb"\)/],
    [['--to', 'trackio', '--project', '../up'], /--project: letters, digits/],
    [['--to', 'trackio', '--format', 'atif'], /--to writes into a tracker: drop --format, --out and --step/],
  ];
  for (const [args, message] of cases) {
    const r = await runCli(['export', runId, ...args], env);
    assert.notEqual(r.code, 0, args.join(' '));
    assert.match(r.stderr, message);
  }
  const missing = await runCli(['export', 'run_nope', '--to', 'trackio', '--dir', dir], env);
  assert.notEqual(missing.code, 0);
  assert.match(missing.stderr, /run run_nope not found/);
  assert.deepEqual(fs.readdirSync(dir), [], 'nothing written');
});
