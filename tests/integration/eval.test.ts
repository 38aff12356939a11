// Evaluation (docs/method.md §8) end to end on real parts: the SFT'd embedded model (cached by tests/helpers/embedded-sft.ts),
// the real sandbox pool, the verifier, the database; through `npx toolsmith eval`, a worker's "eval" job, and an
// OpenAI-compatible server (`npx toolsmith serve-model`) standing in for vLLM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freshDatabase } from '../helpers/db.ts';
import { killAll, runCli, runCliPiped, spawnWorker, startCli, waitFor, type Proc } from '../helpers/proc.ts';
import type { Database } from '../../server/db/client.ts';
import { importDatasetFile } from '../../server/datasets/import.ts';
import { launchEval } from '../../server/lifecycle.ts';
import { createRun } from '../../server/store/runs.ts';
import { readEvents } from '../../server/store/events.ts';
import { OnnxEngine } from '../../workers/engines/onnx-engine.ts';
import { runEvaluation } from '../../workers/eval/run.ts';
import { EvalSpecSchema } from '../../contracts/eval.ts';
import { Verifier } from '../../workers/reward/verifier.ts';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { generate } from '../../workers/tasks/arith.ts';
import { ensureEmbeddedSftModel } from '../helpers/embedded-sft.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let model = '';
let tmp = '';
const K = 2;
const N = 4;

before(async () => {
  model = await ensureEmbeddedSftModel({ log: (m) => console.log(`[sft] ${m}`) });
  fresh = await freshDatabase();
  db = fresh.db;
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'eval-'));
  const file = path.join(tmp, 'arith-test.jsonl');
  fs.writeFileSync(
    file,
    generate({ split: 'test', n: N, seed: 5 })
      .map((p) => JSON.stringify({ problem: p.problem, answer: p.answer }))
      .join('\n'),
  );
  await importDatasetFile(db, file, { name: 'arith-test' });
});
after(async () => {
  await killAll();
  await fresh?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const env = () => ({ DATABASE_URL: fresh.url });
const common = [
  '--dataset',
  'arith-test',
  '--k',
  String(K),
  '--max-tokens',
  '400',
  '--max-turns',
  '5',
  '--temperature',
  '0',
];

async function evalRun(runId: string) {
  const rows = await db.prisma.trajectory.findMany({
    where: { runId },
    orderBy: [{ groupId: 'asc' }, { sampleIndex: 'asc' }],
  });
  const results = await db.prisma.evalResult.findMany({ where: { runId } });
  return { rows, results };
}

test('npx toolsmith eval piped into another program: the whole output arrives, the table last', async () => {
  const r = await runCliPiped(['eval', '--checkpoint', model, ...common], env(), 180_000);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(r.stdout, /^eval run \S+\n/);
  assert.match(
    r.stdout,
    /benchmark\s+problems\s+k\s+pass@1 \[95% CI\]\s+pass@k \[95% CI\]\s+length\s+calls\/traj\s+no call\s+tool err\s+in correct/,
  );
  assert.match(r.stdout, /arith-test\s+4\s+2\s+\d+\.\d%[^\n]*\n$/, "ends with the table's last row");
});

test('npx toolsmith eval: prints the table, stores every trajectory and tool call, and one result per benchmark', async () => {
  const r = await runCli(['eval', '--checkpoint', model, ...common], env(), 180_000);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  assert.match(
    r.stdout,
    /benchmark\s+problems\s+k\s+pass@1 \[95% CI\]\s+pass@k \[95% CI\]\s+length\s+calls\/traj\s+no call\s+tool err\s+in correct/,
  );
  assert.match(r.stdout, /arith-test\s+4\s+2\s+\d+\.\d% \[\d+\.\d–\d+\.\d\]/);
  const run = await db.prisma.run.findFirstOrThrow({ where: { kind: 'eval' }, orderBy: { createdAt: 'desc' } });
  assert.equal(run.status, 'succeeded');
  const { rows, results } = await evalRun(run.id);
  assert.equal(rows.length, N * K);
  assert.ok(rows.every((t) => t.split === 'eval' && t.finishReason && t.content.includes('"turns"')));
  assert.equal(results.length, 1);
  const res = results[0]!;
  assert.equal(res.k, K);
  const perProblem = new Map<string, number[]>();
  for (const t of rows) perProblem.set(t.groupId, [...(perProblem.get(t.groupId) ?? []), t.correct ? 1 : 0]);
  const pass1 =
    [...perProblem.values()].reduce((s, xs) => s + xs.reduce((a, b) => a + b, 0) / xs.length, 0) / perProblem.size;
  assert.ok(Math.abs(res.pass1 - pass1) < 1e-12, 'pass@1 = mean over problems of the mean over samples');
  const calls = await db.prisma.toolCall.count({ where: { runId: run.id } });
  assert.equal(
    calls,
    rows.reduce((s, t) => s + t.toolCalls, 0),
  );
  assert.ok(calls > 0, 'the SFT policy used the tool');
  const metrics = await db.prisma.metricPoint.findMany({ where: { runId: run.id } });
  assert.ok(metrics.some((m) => m.key === 'eval/arith-test/pass1'));
  // Intervals (bootstrap over problems) and each problem's score are kept with the result.
  const details = JSON.parse(res.details!) as {
    pass1Ci: { lo: number; hi: number };
    perProblem: { id: string; correct: number; samples: number }[];
  };
  assert.ok(details.pass1Ci.lo <= res.pass1 && res.pass1 <= details.pass1Ci.hi);
  assert.equal(details.perProblem.length, N);
  assert.ok(details.perProblem.every((p) => p.samples === K));
  // The paired comparison of an evaluation with itself: no difference, the interval includes 0.
  const c = await runCli(['eval', '--compare', `${run.id}@0,${run.id}`], env());
  assert.equal(c.code, 0, c.stderr + c.stdout);
  assert.match(c.stdout, /B − A \[95% CI\]/);
  assert.match(
    c.stdout,
    new RegExp(`arith-test\\s+${N}\\s+.*\\+0\\.0 pts \\[\\+0\\.0, \\+0\\.0\\]\\s+interval includes 0`),
  );
  const bad = await runCli(['eval', '--compare', `${run.id}`], env());
  assert.notEqual(bad.code, 0);
  assert.match(bad.stderr, /--compare needs two evaluations/);
  const missing = await runCli(['eval', '--compare', `${run.id},run_nope`], env());
  assert.match(missing.stderr, /--compare: no run run_nope/);
});

test('bad input names the field: k 0, an unknown dataset, no engine', async () => {
  await assert.rejects(
    launchEval(db, { engine: { kind: 'embedded', checkpoint: model }, datasets: ['arith-test'], k: 0 }),
    /eval spec: k: /,
  );
  const r = await runCli(['eval', '--checkpoint', model, '--dataset', 'nope'], env());
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /datasets: no dataset named "nope"/);
  const r2 = await runCli(['eval', '--dataset', 'arith-test'], env());
  assert.match(r2.stderr, /exactly one of --checkpoint DIR or --url URL/);
});

test('an interrupted evaluation resumes: stored groups are kept, none is duplicated', async () => {
  const spec = EvalSpecSchema.parse({
    engine: { kind: 'embedded', checkpoint: model },
    datasets: ['arith-test'],
    k: K,
    maxTokens: 400,
    maxTurns: 5,
    temperature: 0,
  });
  const run = await createRun(db, { name: 'resume', kind: 'eval', recipeSpec: spec, seed: 0 });
  const engine = await OnnxEngine.load(model);
  const sandbox = await SandboxPool.start({ size: 2, log: () => {} });
  const verifier = new Verifier();
  try {
    const stop = new AbortController();
    const deps = { db, engine, sandbox, verifier, runId: run.id, chunkTrajectories: K };
    await assert.rejects(
      runEvaluation(
        {
          ...deps,
          signal: stop.signal,
          log: (m: string) => {
            if (/1\/4 problems/.test(m)) stop.abort();
          },
        },
        spec,
      ),
      /evaluation stopped/,
    );
    assert.equal((await evalRun(run.id)).rows.length, K, 'one chunk (one problem × k) was stored before the stop');
    const logs: string[] = [];
    const rows = await runEvaluation(
      {
        ...deps,
        log: (m: string) => {
          logs.push(m);
        },
      },
      spec,
    );
    assert.ok(logs.some((m) => /resuming, 1 of 4 problems already done/.test(m)));
    const stored = await evalRun(run.id);
    assert.equal(stored.rows.length, N * K);
    assert.equal(new Set(stored.rows.map((t) => `${t.groupId}#${t.sampleIndex}`)).size, N * K);
    assert.equal(rows[0]!.samples, N * K);
    // Once finished, running it again changes nothing.
    await runEvaluation(deps, spec);
    assert.equal((await evalRun(run.id)).rows.length, N * K);
    assert.equal((await evalRun(run.id)).results.length, 1);
  } finally {
    await engine.close();
    await sandbox.close();
    await verifier.close();
  }
});

test('a worker runs an "eval" job: live rollout events, then the table; an OpenAI-compatible server gives the same greedy results', async () => {
  const { runId } = await launchEval(db, {
    engine: { kind: 'embedded', checkpoint: model },
    datasets: ['arith-test'],
    k: 1,
    maxTokens: 400,
    maxTurns: 5,
    temperature: 0,
  });
  const worker: Proc = spawnWorker(fresh.url, 'eval-worker');
  const run = await waitFor(
    'the eval run to finish',
    async () => {
      const r = await db.prisma.run.findUniqueOrThrow({ where: { id: runId } });
      return ['succeeded', 'failed'].includes(r.status) ? r : null;
    },
    { timeoutMs: 120_000, detail: () => worker.output() },
  );
  assert.equal(run.status, 'succeeded', run.error ?? '');
  const events = await readEvents(db, runId, 0, 10_000);
  const live = events.filter((e) => e.type === 'rollouts');
  assert.ok(live.length > 0, 'in-flight rollouts were published');
  assert.ok(live.some((e) => (e.data as { status: string }[]).some((r) => r.status === 'finished')));
  assert.ok(events.some((e) => e.type === 'eval_table' && /pass@1/.test(e.message)));
  worker.child.kill('SIGTERM');
  const embedded = (await evalRun(runId)).rows;

  // The same evaluation through `serve-model` and the OpenAI-compatible engine: greedy, so identical answers.
  const port = 18000 + Math.floor(Math.random() * 1000);
  const server = startCli(['serve-model', '--checkpoint', model, '--port', String(port)], env());
  try {
    await waitFor(
      'serve-model to answer',
      async () => (await fetch(`http://127.0.0.1:${port}/v1/models`).catch(() => null))?.ok,
      // A bound on a start that must come (loading the model), not a measure of it.
      { timeoutMs: 120_000, detail: () => server.output() },
    );
    const served = ((await (await fetch(`http://127.0.0.1:${port}/v1/models`)).json()) as { data: { id: string }[] })
      .data[0]!.id;
    const r = await runCli(
      [
        'eval',
        '--url',
        `http://127.0.0.1:${port}`,
        '--model',
        served,
        '--tokenizer',
        path.join(model, 'tokenizer.json'),
        '--template',
        'minimal',
        '--dataset',
        'arith-test',
        '--k',
        '1',
        '--max-tokens',
        '400',
        '--max-turns',
        '5',
        '--temperature',
        '0',
      ],
      env(),
      180_000,
    );
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const viaServer = await db.prisma.run.findFirstOrThrow({ where: { kind: 'eval' }, orderBy: { createdAt: 'desc' } });
    const rows = (await evalRun(viaServer.id)).rows;
    assert.deepEqual(
      rows.map((t) => [t.problemId, t.answer, t.correct, t.toolCalls]),
      embedded.map((t) => [t.problemId, t.answer, t.correct, t.toolCalls]),
    );
  } finally {
    server.child.kill('SIGTERM');
  }
});
