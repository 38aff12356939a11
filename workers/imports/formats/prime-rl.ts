/**
 * prime-rl's side files: `metrics.jsonl` before the rollouts (one row per step: `step`, `time`, the trainer's and
 * orchestrator's scalars, kept as the run's metrics under their own names) and the token exports after them
 * (trainer.enable_token_export: one training sample per line, by step and rank). Both are read by byte offsets like
 * the traces. Each token-export line joins the stored trajectory of its step with the same token sequence
 * (server/imports/token-join.ts) and adds the trainer's log-probs and the entropies to its token record; a line that
 * joins none (a sample of a trace not imported, or not written yet) is a problem.
 */
import type { TokenRecord } from '../../../contracts/trajectory.ts';
import {
  mapPrimeRlMetricsLine,
  mapPrimeRlTokenExportLine,
  type TokenExportMapped,
} from '../../../server/imports/formats/prime-rl.ts';
import type { ImportedContent } from '../../../server/imports/to-store.ts';
import { tokenSequenceKey, withTrainerSide } from '../../../server/imports/token-join.ts';
import { logMetrics } from '../../../server/store/metrics.ts';
import { readStepWithTokens, replaceTrajectoryTokens } from '../../../server/store/trajectories.ts';
import type { ImportTarget, ProblemSink, SideFiles } from '../pass.ts';

const TOKEN_EXPORTS = /(^|\/)token_exports\/step_\d+\/rank_\d+\.jsonl$/;

/** Stored trajectories read per query when a step's token index is built. */
const BATCH = 500;

type StepIndex = Map<string, { id: string; record: TokenRecord }>;

export const primeRlSideFiles: SideFiles = {
  async before({ t, readSideFile }) {
    await readSideFile('metrics.jsonl', async (record, where, problems) => {
      const m = mapPrimeRlMetricsLine(record, where);
      if (!m.ok) problems.add(m.problem);
      else await logMetrics(t.db, t.runId, m.step, m.values);
    });
  },
  async after({ t, result, filesMatching, readSideFile }) {
    const steps = new Map<number, StepIndex>();
    for (const file of filesMatching(TOKEN_EXPORTS)) {
      result.lines += await readSideFile(file, async (record, where, problems) => {
        const m = mapPrimeRlTokenExportLine(record, where);
        if (!m.ok) problems.add(m.problem);
        else await joinTokenExport(t, m, steps, where, problems);
      });
    }
  },
};

async function joinTokenExport(
  t: ImportTarget,
  m: Extract<TokenExportMapped, { ok: true }>,
  steps: Map<number, StepIndex>,
  where: { file: string; line: number },
  problems: ProblemSink,
) {
  let index = steps.get(m.step);
  if (!index) {
    index = await tokenIndexOfStep(t, m.step);
    steps.set(m.step, index);
  }
  const hit = index.get(tokenSequenceKey(m.tokens.promptIds, m.tokens.ids));
  const joined = hit && withTrainerSide(hit.record, m.tokens);
  if (!hit)
    problems.add({
      ...where,
      reason: `no imported trajectory of step ${m.step} has this token sequence (${(m.tokens.promptIds?.length ?? 0) + m.tokens.ids.length} tokens)`,
    });
  else if (joined) {
    await replaceTrajectoryTokens(t.db, hit.id, joined);
    hit.record = joined;
  }
}

/** The stored trajectories of one step that have a token record, by the hash of their token sequence. */
async function tokenIndexOfStep(t: ImportTarget, step: number): Promise<StepIndex> {
  const index: StepIndex = new Map();
  for (let offset = 0; ; offset += BATCH) {
    const rows = await readStepWithTokens(t.db, t.runId, step, { withContent: true, offset, limit: BATCH });
    for (const r of rows) {
      if (!r.tokens) continue;
      const content = (r as unknown as { content: string }).content;
      const extras = (JSON.parse(content) as { imported?: ImportedContent }).imported?.tokenExtras;
      index.set(tokenSequenceKey(extras?.promptIds, r.tokens.ids), { id: r.id, record: r.tokens });
    }
    if (rows.length < BATCH) return index;
  }
}
