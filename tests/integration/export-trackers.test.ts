// `npx toolsmith export RUN --to trackio|mlflow` against the real database, Trackio's real local store and a real
// MLflow tracking server (the pinned `trackio` and `mlflow` in the trainer's Python; the server started here on a free
// loopback port and stopped after): a native run (recipe, metrics by step, a tool-using trajectory and an evaluation
// one) and the same run imported back from ATIF are exported, then read back through each tracker's own client and
// compared with the database: the config, every metric value at its step, a trace per trajectory with its messages
// and a span per turn and per tool call (times where the source kept them). A second export of a run is refused, and
// bad flags are named.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
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
import { runCli, waitFor } from '../helpers/proc.ts';
import { freePort } from '../helpers/web-server.ts';

const PY = trainerPython();
const skip =
  spawnSync(PY, ['-c', 'import trackio, mlflow.server'], { stdio: 'ignore' }).status === 0
    ? false
    : `needs ${PY} with trackio and mlflow (node scripts/setup.mjs builds it)`;

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
    [['--to', 'wandb'], /--to: one of trackio, mlflow \(got "wandb"\)/],
    [['--to', 'mlflow'], /--tracking-uri: the MLflow server, http:\/\/HOST:PORT/],
    [['--to', 'mlflow', '--tracking-uri', 'http://u:secret@127.0.0.1:1'], /--tracking-uri: no credentials in the URI/],
    [['--to', 'mlflow', '--tracking-uri', 'http://127.0.0.1:1', '--dir', dir], /--dir is for --to trackio/],
    [['--to', 'trackio', '--tracking-uri', 'http://127.0.0.1:1'], /--tracking-uri is for --to mlflow/],
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

/** A real MLflow tracking server from the trainer's Python, on a free loopback port, its store in `root`. */
async function startMlflow(root: string): Promise<{ uri: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(
    path.join(path.dirname(PY), 'mlflow'),
    [
      'server',
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--workers',
      '1',
      '--backend-store-uri',
      `sqlite:///${path.join(root, 'mlflow.db')}`,
      '--artifacts-destination',
      path.join(root, 'artifacts'),
    ],
    {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        MLFLOW_DISABLE_TELEMETRY: 'true',
        DO_NOT_TRACK: '1',
        // No server-side jobs (its huey consumers): an export needs none.
        MLFLOW_SERVER_ENABLE_JOB_EXECUTION: 'false',
      },
    },
  );
  let log = '';
  child.stdout.on('data', (d) => (log = (log + d).slice(-8000)));
  child.stderr.on('data', (d) => (log = (log + d).slice(-8000)));
  const exited = new Promise((r) => child.on('exit', r));
  const stop = async () => {
    try {
      process.kill(-child.pid!, 'SIGKILL'); // the server and the workers it started: one process group
    } catch {}
    await exited;
  };
  const uri = `http://127.0.0.1:${port}`;
  try {
    // Polls a condition that must come: the server answers once its database is migrated and its worker is up.
    await waitFor(
      'the MLflow server to answer',
      async () => {
        if (child.exitCode !== null) throw new Error(`mlflow server exited: ${log}`);
        return (await fetch(`${uri}/health`).catch(() => null))?.ok ? true : null;
      },
      { timeoutMs: 180_000, intervalMs: 500, detail: () => log },
    );
  } catch (e) {
    await stop();
    throw e;
  }
  return { uri, stop };
}

interface MlflowBack {
  runs: number;
  status: string;
  name: string;
  params: Record<string, string>;
  metrics: Record<string, [number, number][]>;
  config: Record<string, unknown>;
  traces: {
    tags: Record<string, string>;
    spans: {
      name: string;
      type: string;
      start: number;
      end: number;
      parent: string | null;
      untimed: boolean;
      status: string;
    }[];
  }[];
}

/** What the MLflow server holds for a Toolsmith run, through MLflow's own client. */
function readMlflow(uri: string, project: string, runId: string): MlflowBack {
  const script = `
import json, sys
from mlflow import MlflowClient
c = MlflowClient(sys.argv[1])
exp = c.get_experiment_by_name(sys.argv[2])
runs = c.search_runs([exp.experiment_id], filter_string="tags.\`toolsmith.run_id\` = '%s'" % sys.argv[3])
r = runs[0]
metrics = {k: sorted([m.step, m.value] for m in c.get_metric_history(r.info.run_id, k)) for k in r.data.metrics}
config = json.loads(open(c.download_artifacts(r.info.run_id, "toolsmith/config.json", sys.argv[4])).read())
traces = c.search_traces(locations=[exp.experiment_id], run_id=r.info.run_id)
print(json.dumps({"runs": len(runs), "status": r.info.status, "name": r.info.run_name, "params": r.data.params,
  "metrics": metrics, "config": config,
  "traces": [{"tags": t.info.tags, "spans": [{"name": s.name, "type": s.span_type, "start": s.start_time_ns,
    "end": s.end_time_ns, "parent": s.parent_id, "untimed": s.attributes.get("toolsmith.untimed") == "true",
    "status": str(s.status.status_code)} for s in t.data.spans]} for t in traces]}))`;
  const out = spawnSync(PY, ['-c', script, uri, project, runId, fs.mkdtempSync(path.join(dir, 'dl-'))], {
    encoding: 'utf8',
  });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').pop()!);
}

const ms = (iso: number) => iso * 1_000_000;

test('a native run and its ATIF re-import, exported to a real MLflow server, read back through MLflow as stored', {
  skip,
}, async () => {
  const runId = await seedNativeRun();
  const env = { DATABASE_URL: fresh.url };
  // No server there: the error names the flag and the address, at once.
  const none = await runCli(['export', runId, '--to', 'mlflow', '--tracking-uri', 'http://127.0.0.1:9'], {
    ...env,
    MLFLOW_HTTP_REQUEST_MAX_RETRIES: '0',
  });
  assert.notEqual(none.code, 0);
  assert.match(none.stderr, /the MLflow server at http:\/\/127\.0\.0\.1:9 did not answer/);
  const server = await startMlflow(dir);
  try {
    const r = await runCli(
      ['export', runId, '--to', 'mlflow', '--tracking-uri', server.uri, '--project', 'rl'],
      env,
      180_000,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `wrote run ${runId} into MLflow project rl .*: 5 metric values, 2 trajectories as traces; open it at ${server.uri}/#/experiments/\\d+/runs/\\w+`,
      ),
    );
    const got = readMlflow(server.uri, 'rl', runId);
    assert.equal(got.runs, 1);
    assert.equal(got.name, 'to trackio');
    assert.equal(got.status, 'RUNNING', 'a queued run is not reported finished');
    assert.equal(got.params['recipe.name'], 'trackio-export');
    assert.equal(got.params['recipe.rl.steps'], '3');
    assert.equal(got.params['toolsmith.runId'], runId);
    assert.deepEqual((got.config as { recipe: unknown }).recipe, RECIPE);
    assert.deepEqual(got.metrics, {
      'rollout/accuracy': [
        [1, 0.25],
        [2, 0.5],
        [3, 0.75],
      ],
      'train/loss': [
        [1, 1],
        [3, 1 / 3],
      ],
    });
    assert.equal(got.traces.length, 2);
    const train = got.traces.find((t) => t.tags['toolsmith.split'] === 'train')!;
    assert.equal(train.tags['toolsmith.step'], '2');
    const root = train.spans.find((s) => s.parent === null)!;
    const children = train.spans.filter((s) => s.parent !== null);
    assert.deepEqual(
      children.map((s) => [s.name, s.type, s.start, s.end, s.untimed]),
      [
        ['turn 0', 'LLM', ms(T0), ms(T0 + 500), false],
        ['python', 'TOOL', ms(T0 + 650), ms(T0 + 750), false],
        ['turn 1', 'LLM', ms(T0 + 800), ms(T0 + 900), false],
      ],
    );
    assert.deepEqual([root.start, root.end], [ms(T0), ms(T0 + 900)]);

    // Its ATIF re-import: the same spans, each marked untimed (ATIF keeps when a message was written, never how long
    // a turn or a call took: the import leaves those absent, and MLflow's spans then take the trace's times).
    const atif = path.join(dir, 'atif');
    await exportRunAtif(db, runId, atif, { name: 'toolsmith', version: 'test' });
    const back = await launchImport(db, { path: atif }, { roots: null, enqueue: false });
    await importPass({ db, runId: back.runId, folder: back.folder, format: 'atif' });
    const ri = await runCli(
      ['export', back.runId, '--to', 'mlflow', '--tracking-uri', server.uri, '--project', 'rl'],
      env,
      180_000,
    );
    assert.equal(ri.code, 0, ri.stderr);
    const imp = readMlflow(server.uri, 'rl', back.runId);
    const impTrain = imp.traces.find((t) => t.tags['toolsmith.split'] === 'train')!;
    assert.deepEqual(
      impTrain.spans.filter((s) => s.parent !== null).map((s) => [s.type, s.untimed]),
      [
        ['LLM', true],
        ['TOOL', true],
        ['LLM', true],
      ],
    );

    const again = await runCli(
      ['export', runId, '--to', 'mlflow', '--tracking-uri', server.uri, '--project', 'rl'],
      env,
      180_000,
    );
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /MLflow experiment rl already holds run \S+; not written again/);
    assert.equal(readMlflow(server.uri, 'rl', runId).runs, 1);
  } finally {
    await server.stop();
  }
});
