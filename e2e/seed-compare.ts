/**
 * Seeds the e2e server's database (TOOLSMITH_DATA_DIR) for runs-compare.spec.ts: run A, 2 SFT steps then 3 RL steps
 * (its reward and accuracy logged at steps 3–5, its SFT loss at 1–2, an evaluation at steps 2 and 5), and run B, RL only (reward at steps 1–3, one key of its
 * own). Prints their ids as JSON. Run by the spec: `node --import tsx e2e/seed-compare.ts`.
 */
import { openDatabase } from '../server/db/client.ts';
import { logMetrics } from '../server/store/metrics.ts';
import { createRun, setRunStatus } from '../server/store/runs.ts';

const db = await openDatabase();
try {
  const a = await createRun(db, {
    name: 'e2e-compare SFT then RL',
    kind: 'train',
    recipeSpec: {
      stages: [
        { type: 'sft', name: 'warm-up', epochs: 1, batch: 1, data: { n: 2 } },
        { type: 'rl', name: 'grpo', steps: 3 },
      ],
    },
  });
  const b = await createRun(db, {
    name: 'e2e-compare RL only',
    kind: 'train',
    recipeSpec: { stages: [{ type: 'rl', name: 'grpo', steps: 3 }] },
  });
  for (const step of [1, 2]) await logMetrics(db, a.id, step, { 'sft/loss': 2 / step });
  // Accuracy 10%, 50%, 90% and evaluations of 20% then 80%: any smoothing would put the headlines below the last.
  for (const step of [3, 4, 5])
    await logMetrics(db, a.id, step, { 'rollout/reward': step / 10, 'rollout/accuracy': (step - 3) * 0.4 + 0.1 });
  await logMetrics(db, a.id, 2, { 'eval/arith/pass1': 0.2, 'eval/arith/pass1_lo': 0.1, 'eval/arith/pass1_hi': 0.3 });
  await logMetrics(db, a.id, 5, { 'eval/arith/pass1': 0.8, 'eval/arith/pass1_lo': 0.7, 'eval/arith/pass1_hi': 0.9 });
  for (const step of [1, 2, 3]) await logMetrics(db, b.id, step, { 'rollout/reward': step / 5, 'b/only': step });
  for (const r of [a, b]) await setRunStatus(db, r.id, 'succeeded');
  console.log(JSON.stringify({ a: a.id, b: b.id }));
} finally {
  await db.close();
}
