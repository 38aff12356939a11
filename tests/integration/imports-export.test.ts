/**
 * ATIF export against the real database: a native run's trajectory (a tool call, its result, the
 * answer, the token record with tool tokens and both logprob sides) and an imported verl run are exported as ATIF
 * v1.4 documents and imported back: the same trajectories come out (ATIF keeps no time per tool result, so those are
 * left out of the comparison), and the token view of the re-imported one shows the native record's ids, mask and
 * logprobs.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { ForeignTrajectory } from '../../contracts/foreign.ts';
import type { Trajectory } from '../../contracts/trajectory.ts';
import type { Database } from '../../server/db/client.ts';
import { launchImport } from '../../server/imports/launch.ts';
import { createRun } from '../../server/store/runs.ts';
import { insertTrajectories, readTrajectoryTokens } from '../../server/store/trajectories.ts';
import { CharTokenizer, embeddedTokenizerSpec } from '../../workers/engines/tokenizer.ts';
import { foreignOfStored, type StoredRow } from '../../server/imports/atif-export.ts';
import { exportRunAtif, writeNewFile } from '../../workers/imports/export.ts';
import { importPass } from '../../workers/imports/importer.ts';
import { tokenRecord } from '../../workers/policy/token-record.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S, toolResponseTurn } from '../../workers/rollout/template.ts';
import { toTrajectoryInput } from '../../workers/rollout/to-store.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  finishTrajectory,
  newTrajectory,
} from '../../workers/rollout/trajectory.ts';
import { freshDatabase } from '../helpers/db.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let dir: string;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-export-'));
});
afterEach(async () => {
  await fresh.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const tok = new CharTokenizer(embeddedTokenizerSpec());
const AGENT = { name: 'toolsmith', version: 'test' };

/** A native trajectory as the agent loop builds it: a call, its appended result, then the answer. */
function native(): Trajectory {
  const call = `Let me compute.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code: 'print(6*7)', input: '' } })}\n</tool_call>`;
  const ids = tok.encode(call);
  let t = newTrajectory('What is 6*7?', 10);
  t = appendAssistantTurn(
    t,
    {
      text: call,
      tokens: ids.length,
      tokenIds: ids,
      logprobs: ids.map((_, i) => -0.01 * i - 1 / 3),
      engineFinish: 'stop',
      genStartedAt: 1_700_000_000_000,
      genFinishedAt: 1_700_000_000_500,
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
    tokens: tok.encode(appended).length,
    appended: true,
    queuedAt: 1_700_000_000_600,
    startedAt: 1_700_000_000_600,
    finishedAt: 1_700_000_000_700,
    durationMs: 100,
    queueMs: 0,
    stdout: '42\n',
    stderr: '',
    exitCode: 0,
    errorType: null,
  });
  const answer = 'So it is 42.</reason>\n<answer>\\boxed{42}</answer>';
  const aIds = tok.encode(answer);
  t = appendAssistantTurn(
    t,
    {
      text: answer,
      tokens: aIds.length,
      tokenIds: aIds,
      logprobs: aIds.map(() => -0.25),
      engineFinish: 'stop',
      genStartedAt: 1_700_000_000_800,
      genFinishedAt: 1_700_000_000_900,
    },
    S,
  );
  return finishTrajectory(t, 'no_tool_call', 1_700_000_001_000);
}

async function rowsOf(runId: string) {
  const rows = await db.prisma.trajectory.findMany({ where: { runId }, orderBy: { id: 'asc' } });
  return Promise.all(
    rows.map(async (r) => ({
      row: { ...r, content: JSON.parse(r.content) as StoredRow['content'] },
      tokens: await readTrajectoryTokens(db, r.id),
    })),
  );
}

/** What a round trip must keep: everything but where it was read from and the times ATIF has no place for. */
function comparable(t: ForeignTrajectory) {
  const { source: _source, ...rest } = t;
  return {
    ...rest,
    messages: t.messages.map((m) => (m.role === 'tool' ? { ...m, time: undefined } : m)),
  };
}

async function roundTrip(runId: string) {
  const out = path.join(dir, `export-${runId}`);
  const written = await exportRunAtif(db, runId, out, AGENT);
  const back = await launchImport(db, { path: out }, { roots: null, enqueue: false });
  assert.equal(back.format, 'atif', 'the export is read as ATIF by its layout');
  const r = await importPass({ db, runId: back.runId, folder: back.folder, format: 'atif' });
  assert.deepEqual(r.problems, []);
  assert.equal(r.trajectories, written.trajectories);
  return back.runId;
}

test('a native run exported as ATIF and imported back gives the same trajectories, token record included', async () => {
  const run = await createRun(db, { name: 'native', kind: 'train' });
  const t = native();
  const n = tokenRecord(t, tok, null).ids.length;
  const record = tokenRecord(t, tok, {
    trainerLogprobs: Array.from({ length: n }, (_, i) => -1 / (i + 2)),
    weights: Array.from({ length: n }, () => 1),
    clip: Array.from({ length: n }, () => 0 as const),
    advantage: 0.5,
  });
  const scored = {
    reward: 1,
    correct: true,
    verdict: { correct: true, method: 'exact' as const, extracted: '42', reason: 'equal' },
  };
  await insertTrajectories(db, [
    toTrajectoryInput(
      t,
      scored,
      { runId: run.id, step: 3, stage: 0, split: 'train', problemId: 'p1', groupId: 'g7', sampleIndex: 0 },
      record,
    ),
  ]);
  const [before] = await rowsOf(run.id);
  const expected = foreignOfStored(before!.row, before!.tokens);
  assert.equal(expected.messages.length, 4, 'prompt, call, result, answer');
  assert.ok(expected.tokens!.mask!.includes(0), 'the record holds tool tokens');

  const backId = await roundTrip(run.id);
  const [after] = await rowsOf(backId);
  const got = foreignOfStored(after!.row, after!.tokens);
  assert.deepEqual(comparable(got), comparable(expected));
  assert.equal(after!.row.step, 3);
  assert.equal(after!.row.groupId, 'g7');
  assert.equal(after!.row.reward, 1);
  // The token view of the re-imported trajectory: the native ids, mask and both logprob sides.
  const k = after!.tokens!;
  assert.deepEqual(k.ids, before!.tokens!.ids);
  assert.deepEqual(k.mask, before!.tokens!.mask);
  assert.deepEqual(k.rolloutLogprobs, before!.tokens!.rolloutLogprobs);
  assert.deepEqual(k.trainerLogprobs, before!.tokens!.trainerLogprobs);
  assert.equal(k.advantage, 0.5);
  // The trace inspector's turns: the call's code and what came back.
  const turns = after!.row.content.turns;
  assert.equal(turns[0]!.tool?.arguments?.code, 'print(6*7)');
  assert.equal(turns[0]!.tool?.text, '42');
});

test('an imported run exported and imported again keeps its rewards, answers and metadata', async () => {
  const src = path.join(dir, 'verl', 'rollout');
  fs.mkdirSync(src, { recursive: true });
  const lines = [0, 1, 2].map((i) =>
    JSON.stringify({
      input: `p${i % 2}`,
      output: `o${i}`,
      gts: String(i),
      score: i / 2,
      step: 5,
      acc: i > 0,
      pred: `x${i}`,
    }),
  );
  fs.writeFileSync(path.join(src, '5.jsonl'), `${lines.join('\n')}\n`);
  const first = await launchImport(db, { path: path.dirname(src) }, { roots: null, enqueue: false });
  await importPass({ db, runId: first.runId, folder: first.folder, format: 'verl' });
  const before = await rowsOf(first.runId);
  const backId = await roundTrip(first.runId);
  const after = await rowsOf(backId);
  const byId = (xs: typeof before) =>
    new Map(xs.map((x) => [x.row.content.imported!.trajectory.id, comparable(foreignOfStored(x.row, x.tokens))]));
  assert.deepEqual(byId(after), byId(before));
  assert.deepEqual(
    after
      .map((x) => x.row.content.imported!.trajectory.rewards)
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
    before
      .map((x) => x.row.content.imported!.trajectory.rewards)
      .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
  );
});

test('export --out refuses a folder it did not create unless empty, and never writes through a planted symlink', async () => {
  const src = path.join(dir, 'verl1', 'rollout');
  fs.mkdirSync(src, { recursive: true });
  fs.writeFileSync(path.join(src, '1.jsonl'), `${JSON.stringify({ input: 'p', output: 'o', score: 1, step: 1 })}\n`);
  const run = await launchImport(db, { path: path.dirname(src) }, { roots: null, enqueue: false });
  await importPass({ db, runId: run.runId, folder: run.folder, format: 'verl' });
  const victim = path.join(dir, 'victim.txt');
  fs.writeFileSync(victim, 'keep me');

  // A folder holding a planted link (to where the export's file would go) is refused before anything is written.
  const planted = path.join(dir, 'planted');
  fs.mkdirSync(planted);
  const [row] = await db.prisma.trajectory.findMany({ where: { runId: run.runId } });
  fs.symlinkSync(victim, path.join(planted, `${row!.id}.trajectory.json`));
  await assert.rejects(
    exportRunAtif(db, run.runId, planted, AGENT),
    /--out .*planted already holds files; not written/,
  );
  // A link to an empty folder, and a file, are refused too.
  fs.mkdirSync(path.join(dir, 'empty-target'));
  fs.symlinkSync(path.join(dir, 'empty-target'), path.join(dir, 'link-dir'));
  await assert.rejects(exportRunAtif(db, run.runId, path.join(dir, 'link-dir'), AGENT), /is a symlink; not written/);
  await assert.rejects(exportRunAtif(db, run.runId, victim, AGENT), /is not a folder; not written/);
  assert.equal(fs.readFileSync(victim, 'utf8'), 'keep me');

  // A new folder, and an existing empty one, are written.
  assert.equal((await exportRunAtif(db, run.runId, path.join(dir, 'new', 'out'), AGENT)).trajectories, 1);
  fs.mkdirSync(path.join(dir, 'empty'));
  assert.equal((await exportRunAtif(db, run.runId, path.join(dir, 'empty'), AGENT)).trajectories, 1);

  // A link planted in the folder after it was checked (at the temporary name or the file's own): never written
  // through, never replaced.
  const late = path.join(dir, 'late');
  fs.mkdirSync(late);
  fs.symlinkSync(victim, path.join(late, 'a.json.tmp'));
  assert.throws(() => writeNewFile(path.join(late, 'a.json'), '{}'), /a\.json\.tmp appeared in the export folder/);
  fs.symlinkSync(victim, path.join(late, 'b.json'));
  assert.throws(() => writeNewFile(path.join(late, 'b.json'), '{}'), /b\.json appeared in the export folder/);
  assert.equal(fs.readFileSync(victim, 'utf8'), 'keep me', 'the link target is untouched');
  assert.ok(fs.lstatSync(path.join(late, 'b.json')).isSymbolicLink(), 'the planted link is not replaced');
  assert.deepEqual(fs.readdirSync(late).sort(), ['a.json.tmp', 'b.json'], 'no temporary file is left behind');
});
