// @postgresql: also on PostgreSQL, because an imported run's groups and trajectories are written in batches (server/db/batch.ts), per dialect.
/**
 * Runs trained elsewhere, against the real database: a verl dump folder read into an imported run (groups,
 * reward components, per-step dashboard figures, a malformed line counted with its file and line and the rest
 * imported), a second read adding nothing, a follower under a writer that appends (a half-written last line waits
 * for its newline; a follower restarted from the stored offsets neither repeats nor skips a line), the import roots
 * enforced after symlinks, pickled training batches refused, and the web app's Import run action and Follow switch.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { launchImport, prepareImport } from '../../server/imports/launch.ts';
import { setImportFollowing } from '../../server/lifecycle.ts';
import { readEvents } from '../../server/store/events.ts';
import { getImportSource, readImportFiles } from '../../server/store/imports.ts';
import { readSeries } from '../../server/store/metrics.ts';
import { readTrajectoryTokens } from '../../server/store/trajectories.ts';
import { primeEpisode } from '../helpers/foreign-records.ts';
import { followImport, importPass } from '../../workers/imports/importer.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { freshDatabase } from '../helpers/db.ts';
import { principal } from '../helpers/principals.ts';
import { buildTimeline } from '../../components/trace/replay.ts';
import type { StoredTrajectoryContent } from '../../contracts/trajectory.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let dir: string;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-import-'));
});
afterEach(async () => {
  await fresh.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A line as verl's RayPPOTrainer._dump_generations writes it (older trainer: no uid). */
function verlLine(step: number, group: number, sample: number) {
  return `${JSON.stringify({
    input: `problem ${group}: what is ${group} + ${step}?`,
    output: `<think>…</think> the answer is ${sample === 0 ? -1 : group + step}`,
    gts: String(group + step),
    score: sample === 0 ? 0 : 1,
    step,
    acc: sample !== 0,
    format_reward: 0.5,
  })}\n`;
}

function writeVerl(root: string, steps: number[], groups = 2, samples = 3) {
  fs.mkdirSync(path.join(root, 'rollout'), { recursive: true });
  for (const step of steps) {
    let text = '';
    for (let g = 0; g < groups; g++) for (let s = 0; s < samples; s++) text += verlLine(step, g, s);
    fs.writeFileSync(path.join(root, 'rollout', `${step}.jsonl`), text);
  }
}

async function trajectories(runId: string) {
  return db.prisma.trajectory.findMany({ where: { runId }, orderBy: [{ step: 'asc' }, { id: 'asc' }] });
}

test('a verl dump folder becomes a read-only run: groups, reward components, dashboard figures, malformed lines counted', async () => {
  writeVerl(dir, [1, 2]);
  fs.appendFileSync(path.join(dir, 'rollout', '2.jsonl'), '{"input": "cut short\n');
  fs.appendFileSync(path.join(dir, 'rollout', '2.jsonl'), `${JSON.stringify({ input: 'x', output: 'y', step: 2 })}\n`);
  fs.mkdirSync(path.join(dir, 'validation'));
  fs.writeFileSync(
    path.join(dir, 'validation', '2.jsonl'),
    `${JSON.stringify({ input: 'held out', output: '4', gts: '4', score: 1, step: 2 })}\n`,
  );
  const launched = await launchImport(db, { path: dir, name: 'verl run' }, { roots: null, enqueue: false });
  assert.equal(launched.format, 'verl', 'detected from the layout');
  const r = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'verl' });
  assert.equal(r.trajectories, 13);
  assert.equal(r.lines, 15);
  assert.deepEqual(
    r.problems.map((p) => [p.file, p.line]),
    [
      ['rollout/2.jsonl', 7],
      ['rollout/2.jsonl', 8],
    ],
  );
  assert.match(r.problems[1]!.reason, /"score" is missing/);
  const rows = await trajectories(launched.runId);
  assert.equal(rows.length, 13);
  const step1 = rows.filter((t) => t.step === 1 && t.split === 'train');
  assert.equal(new Set(step1.map((t) => t.groupId)).size, 2, 'no uid: the same input is one group');
  const content = JSON.parse(step1[0]!.content);
  assert.deepEqual(content.imported.trajectory.rewards, { acc: step1[0]!.reward, format_reward: 0.5 });
  assert.equal(content.turns.length, 1);
  assert.match(content.prompt, /^problem \d: what is/);
  assert.equal(rows.filter((t) => t.split === 'eval').length, 1, 'the validation dump is the eval split');
  const acc = await readSeries(db, launched.runId, 'rollout/accuracy');
  assert.deepEqual(
    acc.map((p) => [p.step, Number(p.value.toFixed(4))]),
    [
      [1, 0.6667],
      [2, 0.6667],
    ],
  );
  assert.equal((await readSeries(db, launched.runId, 'eval/validation/mean_reward'))[0]?.value, 1);
  const evals = await db.prisma.evalResult.findMany({ where: { runId: launched.runId } });
  assert.deepEqual(
    evals.map((e) => [e.benchmark, e.step, e.pass1, e.toolErrors]),
    [['validation', 2, 1, null]],
    'the validation dump in the evaluations table; tool errors unknown, not 0',
  );
  const warnings = (await readEvents(db, launched.runId)).filter((e) => e.type === 'import_problem');
  assert.equal(warnings.length, 2);
  assert.match(warnings[0]!.message, /^rollout\/2\.jsonl:7: not JSON/);
  const source = await getImportSource(db, launched.runId);
  assert.deepEqual([source?.trajectories, source?.problems, source?.lines], [13, 2, 15]);

  const again = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'verl' });
  assert.deepEqual([again.lines, again.trajectories], [0, 0], 'a second read finds nothing new');
  assert.equal((await trajectories(launched.runId)).length, 13);
});

test('following: appended lines arrive, a half-written line waits for its newline, a restart neither repeats nor skips', async () => {
  fs.mkdirSync(path.join(dir, 'rollout'));
  const file = path.join(dir, 'rollout', '1.jsonl');
  fs.writeFileSync(file, verlLine(1, 0, 0));
  const launched = await launchImport(db, { path: dir, format: 'verl', follow: true }, { roots: null, enqueue: false });
  const stop = new AbortController();
  const following = followImport({
    db,
    runId: launched.runId,
    folder: launched.folder,
    format: 'verl',
    signal: stop.signal,
    pollMs: 50,
  });
  const count = async () => (await trajectories(launched.runId)).length;
  const until = async (n: number) => {
    // A bound on lines that must arrive (the follower polls every 50 ms), not a measure of how fast.
    const deadline = Date.now() + 60_000;
    while ((await count()) < n) {
      if (Date.now() > deadline) throw new Error(`waited for ${n} trajectories, have ${await count()}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  await until(1);
  // A writer appends while the follower reads: 40 lines in bursts, the last of each burst cut in two.
  let written = 1;
  for (let burst = 0; burst < 8; burst++) {
    for (let i = 0; i < 4; i++) fs.appendFileSync(file, verlLine(1, 1 + burst, i));
    const half = verlLine(2, burst, 1);
    fs.appendFileSync(file, half.slice(0, 20));
    written += 4;
    await until(written);
    await new Promise((r) => setTimeout(r, 120));
    assert.equal(await count(), written, 'the half-written line is not read');
    fs.appendFileSync(file, half.slice(20));
    written += 1;
  }
  await until(written);
  stop.abort();
  await following;
  const offsets = await readImportFiles(db, launched.runId);
  assert.equal(offsets.get('rollout/1.jsonl')?.line, written);
  assert.equal(offsets.get('rollout/1.jsonl')?.offset, fs.statSync(file).size);

  // Restart from the stored offsets: lines written while nothing followed, and a new step's file.
  for (let i = 0; i < 5; i++) fs.appendFileSync(file, verlLine(3, 9, i));
  writeVerl(dir, [4], 1, 2);
  const r = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'verl' });
  assert.deepEqual([r.lines, r.trajectories], [7, 7]);
  const rows = await trajectories(launched.runId);
  assert.equal(rows.length, written + 7);
  assert.equal(new Set(rows.map((t) => t.id)).size, rows.length, 'no trajectory twice');

  // A crash after storing a chunk but before its offset: the lines are read again and stored once.
  await db.prisma.importFile.update({
    where: { runId_file: { runId: launched.runId, file: 'rollout/4.jsonl' } },
    data: { offset: 0, line: 0 },
  });
  const replay = await importPass({ db, runId: launched.runId, folder: launched.folder, format: 'verl' });
  assert.deepEqual([replay.lines, replay.trajectories], [2, 0]);
  assert.equal((await trajectories(launched.runId)).length, written + 7);
});

test('the import roots hold after symlinks; pickled batches and unknown folders are refused with the reason', () => {
  const root = path.join(dir, 'root');
  const outside = path.join(dir, 'outside');
  writeVerl(path.join(root, 'run-a'), [1]);
  writeVerl(outside, [1]);
  fs.symlinkSync(outside, path.join(root, 'link-out'));
  assert.equal(prepareImport({ path: path.join(root, 'run-a') }, [root]).format, 'verl');
  assert.throws(() => prepareImport({ path: path.join(root, 'link-out') }, [root]), /not inside an import root/);
  assert.throws(() => prepareImport({ path: path.join(root, '..', 'outside') }, [root]), /not inside an import root/);
  assert.throws(() => prepareImport({ path: path.join(root, 'nope') }, [root]), /no folder at/);

  const pickled = path.join(root, 'slime');
  fs.mkdirSync(pickled);
  fs.writeFileSync(path.join(pickled, 'rollout_0.pt'), 'not read');
  assert.throws(() => prepareImport({ path: pickled }, [root]), /pickled training batches.*never read.*export/s);
  const empty = path.join(root, 'empty');
  fs.mkdirSync(empty);
  fs.writeFileSync(path.join(empty, 'notes.txt'), '');
  assert.throws(() => prepareImport({ path: empty }, [root]), /no rollout files of a known format.*--format/);
  assert.throws(() => prepareImport({ path: empty, format: 'mlflow' }, [root]), /format "mlflow" is not one of/);
});

test('following an import again keeps the reward weights it was started with', async () => {
  const folder = path.join(dir, 'weighted');
  writeVerl(folder, [1]);
  const weights = { accuracy: 2, format: 0.5 };
  const { runId } = await launchImport(db, { path: folder, format: 'verl', weights }, { roots: null, enqueue: true });
  await db.prisma.job.updateMany({ where: { runId }, data: { status: 'succeeded' } });
  await setImportFollowing(db, runId, true);
  const follow = await db.prisma.job.findFirstOrThrow({ where: { runId, status: 'queued' } });
  assert.deepEqual(JSON.parse(follow.payload), { follow: true, weights });
});

test('the Import run action: a folder under an import root only, a researcher or above, the run read by a job', async () => {
  const root = path.join(dir, 'root');
  writeVerl(path.join(root, 'run-b'), [1]);
  writeVerl(path.join(dir, 'elsewhere'), [1]);
  const previous = process.env.TOOLSMITH_IMPORT_ROOTS;
  process.env.TOOLSMITH_IMPORT_ROOTS = root;
  try {
    const call = (role: 'viewer' | 'researcher') => createCallerFactory(appRouter)({ db, principal: principal(role) });
    assert.deepEqual((await call('viewer').runs.importRoots()).roots, [root]);
    await assert.rejects(call('viewer').runs.importFolder({ path: path.join(root, 'run-b') }), /researcher/);
    await assert.rejects(
      call('researcher').runs.importFolder({ path: path.join(dir, 'elsewhere') }),
      /not inside an import root/,
    );
    await assert.rejects(
      call('researcher').runs.importFolder({ path: path.join(root, 'run-b'), weights: { acc: Number.NaN } }),
      /weights/,
    );
    const r = await call('researcher').runs.importFolder({
      path: path.join(root, 'run-b'),
      name: 'from the UI',
      weights: { acc: 2, format_reward: 0.5 },
      frameworkVersion: '0.9.1',
    });
    assert.equal(r.format, null, 'the import job finds the format (imports-walk.test.ts)');
    const jobs = await db.prisma.job.findMany({ where: { runId: r.runId } });
    assert.deepEqual(
      jobs.map((j) => [j.kind, JSON.parse(j.payload).follow, JSON.parse(j.payload).weights]),
      [['import', false, { acc: 2, format_reward: 0.5 }]],
      "the dialog's reward weights travel with the job",
    );
    assert.equal((await getImportSource(db, r.runId))?.frameworkVersion, '0.9.1');
    const run = await db.prisma.run.findUniqueOrThrow({ where: { id: r.runId } });
    assert.deepEqual([run.kind, run.name, run.createdBy], ['import', 'from the UI', 'u_test_researcher']);
    // The Follow switch: on enqueues a follow job (one at a time), off cancels it.
    await call('researcher').runs.followImport({ runId: r.runId, follow: true });
    assert.equal(await db.prisma.job.count({ where: { runId: r.runId } }), 1, 'a job is already there: none added');
    await db.prisma.job.updateMany({ where: { runId: r.runId }, data: { status: 'succeeded' } });
    await call('researcher').runs.followImport({ runId: r.runId, follow: true });
    const follow = await db.prisma.job.findFirstOrThrow({ where: { runId: r.runId, status: 'queued' } });
    assert.equal(JSON.parse(follow.payload).follow, true);
    await call('researcher').runs.followImport({ runId: r.runId, follow: false });
    assert.notEqual((await db.prisma.job.findUniqueOrThrow({ where: { id: follow.id } })).status, 'queued');
  } finally {
    if (previous === undefined) delete process.env.TOOLSMITH_IMPORT_ROOTS;
    else process.env.TOOLSMITH_IMPORT_ROOTS = previous;
  }
});

/** A Harbor trial folder: agent/trajectory.json (ATIF v1.4, with token ids, logprobs and times) and its reward. */
function writeAtifTrial(root: string, trial: string, step: number, answer: number, reward: number) {
  const doc = {
    schema_version: 'ATIF-v1.4',
    session_id: trial,
    agent: { name: 'elsewhere', version: '1' },
    steps: [
      { step_id: 1, source: 'user', message: 'What is 23*4?', timestamp: '2026-10-16T14:30:00Z' },
      {
        step_id: 2,
        source: 'agent',
        message: 'Let me compute.',
        timestamp: '2026-10-16T14:30:02Z',
        tool_calls: [{ tool_call_id: 'c1', function_name: 'python', arguments: { code: 'print(23*4)' } }],
        observation: { results: [{ source_call_id: 'c1', content: '92\n' }] },
        metrics: { prompt_token_ids: [1, 2, 3], completion_token_ids: [10, 11], logprobs: [-0.1, -0.2] },
      },
      {
        step_id: 3,
        source: 'agent',
        message: `The answer is ${answer}.`,
        timestamp: '2026-10-16T14:30:05Z',
        metrics: { completion_token_ids: [12], logprobs: [-0.3] },
      },
    ],
    extra: { step, group_id: `g${step}` },
  };
  fs.mkdirSync(path.join(root, trial, 'agent'), { recursive: true });
  fs.mkdirSync(path.join(root, trial, 'verifier'), { recursive: true });
  fs.writeFileSync(path.join(root, trial, 'agent', 'trajectory.json'), JSON.stringify(doc));
  fs.writeFileSync(path.join(root, trial, 'verifier', 'reward.txt'), `${reward}\n`);
}

test('every view reads an imported run: explorer, same prompt across steps, trace with times, token view, compare, share links', async () => {
  const atifDir = path.join(dir, 'harbor');
  writeAtifTrial(atifDir, 'trial-1', 1, 92, 1);
  writeAtifTrial(atifDir, 'trial-2', 1, 90, 0);
  writeAtifTrial(atifDir, 'trial-3', 2, 92, 1);
  writeVerl(path.join(dir, 'verl'), [1, 2]);
  const researcher = principal('researcher');
  const load = async (folder: string, name: string) => {
    const l = await launchImport(
      db,
      { path: folder, name, createdBy: researcher.userId },
      { roots: null, enqueue: false },
    );
    await importPass({ db, runId: l.runId, folder: l.folder, format: l.format });
    return l;
  };
  const atif = await load(atifDir, 'harbor trials');
  assert.equal(atif.format, 'atif');
  const verl = await load(path.join(dir, 'verl'), 'verl run');
  const caller = createCallerFactory(appRouter)({ db, principal: researcher });

  // The explorer: the step slider's stops and a step's page.
  assert.deepEqual(
    (await caller.trajectories.steps({ runId: atif.runId })).map((s) => s.step),
    [1, 2],
  );
  const page = await caller.trajectories.list({ runId: atif.runId, step: 1, sort: 'reward_desc' });
  assert.equal(page.items.length, 2);
  assert.deepEqual(
    page.items.map((t) => t.reward),
    [1, 0],
  );
  // The trace inspector: the turns with their tool call and result, and the times the replay plays back.
  const t = await caller.trajectories.get({ id: page.items[0]!.id });
  const timeline = buildTimeline(t.content as StoredTrajectoryContent);
  assert.equal(timeline.origin, Date.parse('2026-10-16T14:30:02Z'), 'the replay starts at the first agent step');
  assert.equal(timeline.duration, 3000, 'and ends at the answer, 3 s later');
  assert.equal(timeline.spans.length, 2);
  assert.equal(t.toolCalls.length, 1);
  // The token view: the source's ids and rollout logprobs.
  const tokens = await caller.trajectories.tokens({ id: page.items[0]!.id });
  assert.ok(tokens.record, 'an ATIF trajectory with token ids has a token record');
  assert.equal(JSON.stringify(tokens.record).includes('-0.3'), true, JSON.stringify(tokens.record));
  // The same prompt across steps: all three trials asked the same question.
  const problemId = (await db.prisma.trajectory.findFirstOrThrow({ where: { id: page.items[0]!.id } })).problemId;
  assert.ok(problemId);
  const same = await caller.trajectories.samePrompt({ runId: atif.runId, problemId });
  assert.deepEqual(
    same.map((x) => x.step),
    [1, 1, 2],
  );
  // Compare: the imported runs side by side, their per-step reward series aligned.
  const compared = await caller.runs.compare({ runIds: [atif.runId, verl.runId] });
  assert.deepEqual(
    compared.runs.map((r) => r.id),
    [atif.runId, verl.runId],
  );
  // Share links: a run link opens the imported run, its trajectory and its tokens; a compare link names both runs.
  const link = await caller.share.create({ scope: 'run', target: { runId: atif.runId } });
  const anon = createCallerFactory(appRouter)({ db, principal: null });
  const view = await anon.share.view.summary({ token: link.token });
  assert.equal(JSON.stringify(view).includes(atif.runId), true);
  const shared = await anon.share.view.trajectory({ token: link.token, trajectoryId: page.items[0]!.id });
  assert.equal(shared.id, page.items[0]!.id);
  const sharedTokens = await anon.share.view.trajectoryTokens({ token: link.token, trajectoryId: page.items[0]!.id });
  assert.deepEqual(sharedTokens, tokens);
  await assert.rejects(
    anon.share.view.trajectory({ token: link.token, trajectoryId: (await trajectories(verl.runId))[0]!.id }),
    /not found/,
  );
  const both = await caller.share.create({ scope: 'compare', target: { runIds: [atif.runId, verl.runId] } });
  assert.equal(JSON.stringify(await anon.share.view.summary({ token: both.token })).includes(verl.runId), true);
});

test("prime-rl's token exports join their traces by token sequence: the trainer's log-probs and entropies reach the token record", async () => {
  const prime = path.join(dir, 'prime');
  fs.mkdirSync(path.join(prime, 'rollouts/step_42/train/all'), { recursive: true });
  fs.writeFileSync(path.join(prime, 'rollouts/step_42/train/all/traces.jsonl'), `${JSON.stringify(primeEpisode)}\n`);
  const l = await launchImport(db, { path: prime }, { roots: null, enqueue: false });
  const pass = () => importPass({ db, runId: l.runId, folder: l.folder, format: l.format });
  assert.deepEqual((await pass()).problems, []);
  const [row] = await trajectories(l.runId);
  const before = await readTrajectoryTokens(db, row!.id);
  assert.ok(before);
  assert.equal(before.trainerLogprobs, null, 'the traces carry no trainer side');
  const promptIds = JSON.parse(row!.content).imported.tokenExtras.promptIds as number[];
  // A line as prime-rl's TokenExporter writes one: the whole sequence, the loss mask, per-token columns.
  const exportLine = (ids: number[], mask: boolean[], trainer: number[]) =>
    JSON.stringify({
      step: 42,
      rank: 0,
      micro_step: 0,
      export_sequence_idx: 0,
      env_name: 'math',
      token_ids: [...promptIds, ...ids],
      loss_mask: [...promptIds.map(() => false), ...mask],
      trainer_logprobs: [...promptIds.map(() => 0), ...trainer],
      entropy: [...promptIds.map(() => 0.5), ...ids.map(() => 0.25)],
    });
  const trainer = before.ids.map((_, i) => -(i + 1) / 8);
  fs.mkdirSync(path.join(prime, 'token_exports/step_42'), { recursive: true });
  fs.writeFileSync(
    path.join(prime, 'token_exports/step_42/rank_0.jsonl'),
    `${exportLine(
      before.ids,
      before.mask.map((m) => m === 1),
      trainer,
    )}\n${exportLine([999, 998], [true, true], [-1, -1])}\n`,
  );
  const joined = await pass();
  assert.deepEqual(
    joined.problems.map((p) => [p.file, p.line, p.reason]),
    [
      [
        'token_exports/step_42/rank_0.jsonl',
        2,
        `no imported trajectory of step 42 has this token sequence (${promptIds.length + 2} tokens)`,
      ],
    ],
  );
  const after = await readTrajectoryTokens(db, row!.id);
  assert.ok(after);
  assert.deepEqual(after.trainerLogprobs, trainer);
  assert.deepEqual(
    after.entropy,
    before.ids.map(() => 0.25),
    'the traces had no entropies: the export gives them',
  );
  assert.deepEqual([after.ids, after.mask, after.rolloutLogprobs], [before.ids, before.mask, before.rolloutLogprobs]);
  assert.equal((await pass()).lines, 0, 'a second pass reads nothing new');
});

test('a failure to store what was read is no problem of the file: it propagates, and the next pass imports the file', async () => {
  const harbor = path.join(dir, 'harbor-fault');
  writeAtifTrial(harbor, 'trial-1', 1, 92, 1);
  const l = await launchImport(db, { path: harbor }, { roots: null, enqueue: false });
  // Fault injector (a database does not fail on demand): interactive transactions, which store trajectories, fail.
  const prisma = new Proxy(db.prisma, {
    get: (target, key, receiver) =>
      key === '$transaction'
        ? (arg: unknown, opts?: unknown) =>
            typeof arg === 'function'
              ? Promise.reject(new Error('injected: the database went away'))
              : target.$transaction(arg as never, opts as never)
        : Reflect.get(target, key, receiver),
  });
  const failing = { ...db, prisma } as Database;
  await assert.rejects(importPass({ db: failing, runId: l.runId, folder: l.folder, format: l.format }), /injected/);
  assert.deepEqual([...(await readImportFiles(db, l.runId)).values()], [], 'the file is not marked read');
  const r = await importPass({ db, runId: l.runId, folder: l.folder, format: l.format });
  assert.deepEqual([r.trajectories, r.problems.length], [1, 0]);
});
