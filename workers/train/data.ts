/**
 * Where a run's problems come from: the generated embedded task, or a stored (imported) dataset. Generated eval sets
 * are also stored as datasets (named by their parameters) so that evaluations, the UI and the CLI treat both alike.
 */
import type { Database } from '../../server/db/client.ts';
import { importDataset } from '../../server/datasets/import.ts';
import { listProblemRows } from '../../server/store/datasets.ts';
import type { PromptSource, Family, SftData } from '../../contracts/recipe.ts';
import type { WorkedProblem } from '../tasks/gsm-demos.ts';
import { resolveDataset } from '../eval/run.ts';
import { generate } from '../tasks/arith.ts';

export interface TaskProblem {
  id: string;
  question: string;
  answer: string;
}

type Generated = Extract<PromptSource, { kind: 'generated' }>;

function generated(s: Generated) {
  return generate({
    split: s.split,
    n: s.n,
    seed: s.seed,
    families: s.families as Family[] | undefined,
    difficulty: s.difficulty,
  });
}

export async function loadProblems(db: Database, s: PromptSource): Promise<TaskProblem[]> {
  if (s.kind === 'generated') return generated(s).map((p) => ({ id: p.id, question: p.problem, answer: p.answer }));
  const ds = await resolveDataset(db, s.version ? `${s.name}@${s.version}` : s.name);
  const rows = await listProblemRows(db, {
    datasetId: ds.id,
    split: s.split === 'all' ? undefined : s.split,
    limit: s.limit,
    pick: s.pick,
  });
  return rows.map((p) => ({ id: p.id, question: p.question, answer: p.answer }));
}

/** A stored dataset's problems with their worked solutions or families (metadata), for SFT demonstrations. */
export async function loadWorkedProblems(
  db: Database,
  s: Extract<SftData, { kind: 'stored' }>,
): Promise<WorkedProblem[]> {
  const ds = await resolveDataset(db, s.version ? `${s.name}@${s.version}` : s.name);
  const rows = await listProblemRows(db, { datasetId: ds.id, split: s.split === 'all' ? undefined : s.split });
  return rows.map((p) => {
    const meta = p.metadata ? (JSON.parse(p.metadata) as Record<string, unknown>) : {};
    return {
      id: p.id,
      question: p.question,
      answer: p.answer,
      solution: typeof meta.solution === 'string' ? meta.solution : null,
      family: typeof meta.family === 'string' ? meta.family : null,
    };
  });
}

/** The dataset reference (name) an evaluation reads for this source; generated sets are stored on first use. */
export async function evalDatasetRef(db: Database, s: PromptSource): Promise<string> {
  if (s.kind === 'stored') return s.version ? `${s.name}@${s.version}` : s.name;
  const name = `arith-${s.split}-n${s.n}-s${s.seed}${s.families ? `-${s.families.join('+')}` : ''}${s.difficulty ? `-d${[s.difficulty].flat().join('+')}` : ''}`;
  const lines = generated(s).map((p) =>
    JSON.stringify({ problem: p.problem, answer: p.answer, id: p.id, family: p.family }),
  );
  const r = await importDataset(db, new TextEncoder().encode(lines.join('\n')), {
    name,
    file: `${name}.jsonl`,
    format: 'jsonl',
    idField: 'id',
    split: 'test',
  });
  return `${r.dataset.name}@${r.dataset.version}`;
}
