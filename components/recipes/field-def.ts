/**
 * What the recipe designer knows of one field (FieldDef: label, control, default, help) and the pieces its catalogues
 * share: defaults by model kind, the tool limits, the data sources' fields. The catalogues are fields.ts (the
 * recipe), stage-fields.ts (one stage, one evaluation dataset); timeline.ts lays the stages out.
 */
import { FAMILIES, type ModelSpec, TOOL_SESSION_MODES } from '../../contracts/recipe.ts';
import type { Spec } from './path.ts';

export type ModelKind = ModelSpec['kind'];
export type FieldKind =
  | 'text'
  | 'textarea'
  | 'int'
  | 'number'
  | 'select'
  | 'bool'
  /** A list of strings, written comma-separated. */
  | 'list'
  /** A discriminator ("kind"): switching replaces the parent object with `variants[value]`. */
  | 'variant'
  /** A literal the schema fills in (shown, not editable). */
  | 'fixed'
  /** An optional / nullable object: a checkbox that sets it to `on` or removes it (`off`: undefined or null). */
  | 'toggle'
  | 'families'
  | 'difficulty';

export interface FieldDef {
  label: string;
  help: string;
  kind: FieldKind;
  options?: readonly string[];
  /** Empty means null (the schema's "off") rather than "leave out". */
  nullable?: boolean;
  /** The default, shown as placeholder when the field is empty; by model kind where it depends on it. */
  def?: string | ((m: ModelKind) => string);
  /** variant: the object each option starts from. */
  variants?: Record<string, Spec>;
  /** select: values the schema also accepts, shown as the option they mean (tool.session's `false` is `off`). */
  aliases?: Record<string, string>;
  /** toggle: the value when switched on, and the value when off (undefined = key removed). */
  on?: unknown;
  off?: null;
}

export type Catalogue = Record<string, FieldDef>;

export const byModel = (named: unknown, embedded: unknown) => (m: ModelKind) =>
  String(m === 'model' ? named : embedded);

export function defaultText(f: FieldDef, m: ModelKind): string {
  return typeof f.def === 'function' ? f.def(m) : (f.def ?? '');
}

export const toolFields = (prefix: string, scope: string): Catalogue => ({
  [`${prefix}timeoutS`]: {
    label: 'Timeout (s)',
    kind: 'number',
    def: '4',
    help: `Time limit per tool call${scope} (code-judge is launched with 4 s).`,
  },
  [`${prefix}memoryMb`]: {
    label: 'Memory (MiB)',
    kind: 'int',
    def: '1024',
    help: `Memory limit per tool call${scope} (ours: 1 GiB; code-judge: 256 MB + 128 MB, docs/method.md §3).`,
  },
  [`${prefix}session`]: {
    label: 'Interpreter session',
    kind: 'select',
    options: TOOL_SESSION_MODES,
    aliases: { false: 'off', true: 'replay' },
    def: 'off',
    help: "State across the calls of one trajectory. off (the paper): a fresh interpreter per call; replay: each call first replays the trajectory's earlier calls; trajectory: one interpreter for the whole trajectory (variables, imports, /tmp), its limits covering all its calls.",
  },
  [`${prefix}sessionTimeS`]: {
    label: 'Session time (s)',
    kind: 'number',
    def: '60',
    help: `With the "trajectory" session${scope}: the time all of a trajectory's calls may take together; past it the session ends and the next call starts a new one.`,
  },
  [`${prefix}seedCalls`]: {
    label: 'Seed tool calls',
    kind: 'bool',
    def: 'false',
    help: "Seed each call's random, numpy and default_rng() from the trajectory's seed (seed × 1000 + turn, recorded with the call); off: fresh entropy in every call.",
  },
});

export const familiesField: FieldDef = {
  label: 'Families',
  kind: 'families',
  options: FAMILIES,
  def: 'all but easy',
  help: 'Problem families of the generated arith task (default: every family but "easy").',
};
export const difficultyField: FieldDef = {
  label: 'Difficulty',
  kind: 'difficulty',
  options: ['1', '2', '3'],
  def: '1, 2, 3',
  help: 'Difficulty levels, drawn per problem (default: all three).',
};

/** A prompt / evaluation data source (generated arith problems or a stored dataset), under `prefix`. */
export function sourceFields(prefix: string, split: 'train' | 'test'): Catalogue {
  return {
    [`${prefix}kind`]: {
      label: 'Source',
      kind: 'variant',
      options: ['generated', 'stored'],
      variants: {
        generated: { kind: 'generated', n: split === 'train' ? 2000 : 32 },
        stored: { kind: 'stored', name: '' },
      },
      help: 'generated: arith problems made from a seed; stored: an imported dataset (npx toolsmith dataset import).',
    },
    [`${prefix}task`]: {
      label: 'Task',
      kind: 'fixed',
      def: 'arith',
      help: 'The generated task (arith is the only one).',
    },
    [`${prefix}split`]: {
      label: 'Split',
      kind: 'select',
      options: ['train', 'test', 'all'],
      def: split,
      help:
        split === 'train'
          ? 'Split the prompts come from (default train; RL data is integer-answer problems, §7).'
          : 'Split evaluated (default test: held-out problems, §8).',
    },
    [`${prefix}n`]: { label: 'Problems', kind: 'int', help: 'Number of generated problems in the pool.' },
    [`${prefix}seed`]: {
      label: 'Data seed',
      kind: 'int',
      def: '0',
      help: 'Seed of the generated problems (same seed, same problems).',
    },
    [`${prefix}families`]: familiesField,
    [`${prefix}difficulty`]: difficultyField,
    [`${prefix}name`]: { label: 'Dataset', kind: 'text', help: 'Name of a stored (imported) dataset.' },
    [`${prefix}version`]: {
      label: 'Dataset version',
      kind: 'int',
      def: 'latest',
      help: 'Version of the stored dataset (default: the latest).',
    },
    [`${prefix}limit`]: {
      label: 'Limit',
      kind: 'int',
      def: 'all',
      help: 'Use at most this many problems: the first ones in index order, or spread over the split (Pick).',
    },
    [`${prefix}pick`]: {
      label: 'Pick',
      kind: 'select',
      options: ['first', 'spread'],
      def: 'first',
      help: 'With a limit: the first problems, or every (size / limit)-th one (a sample of every part of a dataset stored in order, e.g. one variant per generator).',
    },
  };
}

/** Top-level recipe fields (stages and eval datasets have their own catalogues). */
