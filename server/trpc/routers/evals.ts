import { z } from 'zod';
import { viewerProcedure, router } from '../init.ts';
import { assertRunExists } from '../guards.ts';
import { listEvalResults } from '../../store/evals.ts';
import { pairedEvalComparison } from '../../store/eval-compare.ts';

const id = z.string().min(1).max(100);

/** The report's headline table and protocol (docs/method.md §8), for the evaluation page's reference rows. */
export const REPORT_REFERENCE = {
  benchmarks: ['MATH-500', 'AIME24', 'AIME25', 'HMMT25'],
  models: [
    { name: 'rStar2-Agent-14B', scores: [97.8, 80.6, 69.8, 52.7] },
    { name: 'DeepSeek-R1 (671B)', scores: [97.3, 79.8, 70.0, 44.4] },
    { name: 'o3-mini (medium)', scores: [98.0, 79.6, 77.0, 53.0] },
    { name: 'QwQ-32B', scores: [98.0, 79.5, 65.8, 47.5] },
    { name: 'Qwen3-14B', scores: [96.8, 79.3, 70.4, 48.9] },
  ],
  /** Average response length in tokens. */
  lengths: {
    AIME24: { 'rStar2-Agent-14B': 9340, 'Qwen3-14B': 14748 },
    AIME25: { 'rStar2-Agent-14B': 10943, 'Qwen3-14B': 17522 },
  },
  protocol: 'temperature 0.6, up to 30K tokens, 30 turns, 16 samples per question, pass@1 averaged',
} as const;

export const evalsRouter = router({
  /** A run's evaluation rows (one per benchmark and evaluated step) with `details` parsed, by step then benchmark. */
  list: viewerProcedure.input(z.object({ runId: id })).query(async ({ ctx, input }) => {
    await assertRunExists(ctx.db, input.runId);
    const rows = await listEvalResults(ctx.db, input.runId);
    return rows.map((r) => ({ ...r, details: r.details == null ? null : (JSON.parse(r.details) as unknown) }));
  }),

  reference: viewerProcedure.query(() => REPORT_REFERENCE),

  /** Two evaluations on the same problems — two steps of one run, or two runs (each at a step, default its latest
   *  evaluated one): per benchmark both, pass@1 with intervals, and the paired difference b − a with its interval. */
  compare: viewerProcedure
    .input(
      z.object({
        a: z.object({ runId: id, step: z.number().int().min(0).optional() }),
        b: z.object({ runId: id, step: z.number().int().min(0).optional() }),
      }),
    )
    .query(async ({ ctx, input }) => {
      await assertRunExists(ctx.db, input.a.runId);
      await assertRunExists(ctx.db, input.b.runId);
      return pairedEvalComparison(ctx.db, input.a, input.b);
    }),
});
