/**
 * Seeds the e2e server's database (TOOLSMITH_DATA_DIR) for token-view.spec.ts: a run with one trained-on trajectory
 * (2 turns, a tool call, engine logprobs and entropies, the trainer's logprobs, TIS weights and a clip state on
 * every kind of token) and one without a token record, plus a trajectory share link. Prints the run's and their ids and the
 * link's token as JSON. Run by the spec: `node --import tsx e2e/seed-token-view.ts`.
 */
import { openDatabase } from '../server/db/client.ts';
import { createRun } from '../server/store/runs.ts';
import { insertTrajectories } from '../server/store/trajectories.ts';
import { createShareLink } from '../server/share/links.ts';
import type { ClipState, Trajectory } from '../contracts/trajectory.ts';
import { CharTokenizer, embeddedTokenizerSpec } from '../workers/engines/tokenizer.ts';
import { EMBEDDED_TEMPLATE_SETTINGS as S } from '../workers/rollout/template.ts';
import { toTrajectoryInput } from '../workers/rollout/to-store.ts';
import { appendAssistantTurn, finishTrajectory, newTrajectory } from '../workers/rollout/trajectory.ts';
import { tokenRecord } from '../workers/policy/token-record.ts';
import { trainPlace, withPythonCall } from './seed-store.ts';

const tok = new CharTokenizer(embeddedTokenizerSpec());
const call = `Compute it.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code: 'print(6*7)', input: '' } })}\n</tool_call>`;
const answer = 'It is 42.</reason>\n<answer>\\boxed{42}</answer>';
let t: Trajectory = newTrajectory('What is 6*7?', 10);
const ids1 = tok.encode(call);
// Token 0 is very unlikely for the engine (logprob −5): the spec checks its colour and hover text.
t = appendAssistantTurn(
  t,
  {
    text: call,
    tokens: ids1.length,
    tokenIds: ids1,
    logprobs: ids1.map((_, i) => (i === 0 ? -5 : -0.05)),
    engineFinish: 'stop',
    genStartedAt: 1,
    genFinishedAt: 2,
  },
  S,
);
t = { ...t, turns: [{ ...t.turns[0]!, entropies: ids1.map(() => 0.5) }] };
t = withPythonCall(t, { code: 'print(6*7)', text: '42', stdout: '42\n', at: 2, tokens: (a) => tok.encode(a).length });
const ids2 = tok.encode(answer);
t = appendAssistantTurn(
  t,
  {
    text: answer,
    tokens: ids2.length,
    tokenIds: ids2,
    logprobs: ids2.map(() => -0.05),
    engineFinish: 'stop',
    genStartedAt: 4,
    genFinishedAt: 5,
  },
  S,
);
t = finishTrajectory(t, 'no_tool_call', 6);

const n = tokenRecord(t, tok, null).ids.length;
// Token 1 truncated by TIS, token 2 masked by TIS, token 3 clipped high; the trainer disagrees on token 0 by +1.
const clip = Array.from({ length: n }, (_, i): ClipState => (i === 1 ? 4 : i === 2 ? 5 : i === 3 ? 2 : 0));
const record = tokenRecord(t, tok, {
  trainerLogprobs: Array.from({ length: n }, (_, i) => (i === 0 ? -4 : -0.05)),
  weights: clip.map((c) => (c === 5 ? 0 : c === 4 ? 2 : 1)),
  clip,
  advantage: 0.75,
});

const db = await openDatabase();
try {
  const run = await createRun(db, { name: 'e2e-token-view', kind: 'train', seed: 0 });
  const scored = {
    reward: 1,
    correct: true,
    verdict: { correct: true, method: 'exact' as const, extracted: '42', reason: 'equal' },
  };
  const withTokens = `tr_tok_${run.id.slice(4)}`;
  const without = `tr_notok_${run.id.slice(4)}`;
  await insertTrajectories(db, [
    { ...toTrajectoryInput(t, scored, trainPlace(run.id, 0), record), id: withTokens },
    { ...toTrajectoryInput(t, scored, trainPlace(run.id, 1)), id: without },
  ]);
  const link = await createShareLink(db, { scope: 'trajectory', target: { trajectoryId: withTokens } });
  console.log(
    JSON.stringify({
      run: run.id,
      withTokens,
      without,
      token: link.token,
      modelTokens: record.mask.filter((m) => m === 1).length,
      toolPieces: 1,
    }),
  );
} finally {
  await db.close();
}
