/**
 * The recipe designer's field catalogue: for every recipe field (contracts/recipe.ts RecipeSchema) a label, the kind of
 * control, the default shown as placeholder, and a one-line help drawn from the method (docs/method.md §2–§8).
 * Paths are relative to the object a catalogue describes: RECIPE_FIELDS to the recipe (stages and eval datasets
 * aside), SFT_FIELDS / RL_FIELDS to one stage, EVAL_SOURCE_FIELDS to one evaluation dataset.
 * tests/unit/recipe-designer.test.ts walks the zod schema and checks every field has an entry here.
 */
import { EMBEDDED_DEFAULTS, FAMILIES, REPORT_DEFAULTS, TIS_MODES, type ModelSpec } from '../../contracts/recipe.ts';
import type { Spec } from './path.ts';
import { WEIGHT_SYNC_MODES } from '../../contracts/engine.ts';

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
  /** toggle: the value when switched on, and the value when off (undefined = key removed). */
  on?: unknown;
  off?: null;
}

export type Catalogue = Record<string, FieldDef>;

const R = REPORT_DEFAULTS;
const E = EMBEDDED_DEFAULTS;
const byModel = (named: unknown, embedded: unknown) => (m: ModelKind) => String(m === 'model' ? named : embedded);

export function defaultText(f: FieldDef, m: ModelKind): string {
  return typeof f.def === 'function' ? f.def(m) : (f.def ?? '');
}

const toolFields = (prefix: string, scope: string): Catalogue => ({
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
    label: 'Keep interpreter session',
    kind: 'bool',
    def: 'false',
    help: 'Keep interpreter state across the calls of one trajectory (off in the paper: a fresh interpreter per call).',
  },
  [`${prefix}seedCalls`]: {
    label: 'Seed tool calls',
    kind: 'bool',
    def: 'false',
    help: "Seed each call's random, numpy and default_rng() from the trajectory's seed (seed × 1000 + turn, recorded with the call); off: fresh entropy in every call.",
  },
});

const familiesField: FieldDef = {
  label: 'Families',
  kind: 'families',
  options: FAMILIES,
  def: 'all but easy',
  help: 'Problem families of the generated arith task (default: every family but "easy").',
};
const difficultyField: FieldDef = {
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
export const RECIPE_FIELDS: Catalogue = {
  name: { label: 'Name', kind: 'text', help: 'Recipe name; saving under a new name starts its version 1 (a clone).' },
  description: { label: 'Description', kind: 'textarea', def: '(none)', help: 'Free text shown in the recipe list.' },
  seed: {
    label: 'Seed',
    kind: 'int',
    def: '0',
    help: 'Run seed (initialisation, sampling, data order); a launch can override it.',
  },

  'model.kind': {
    label: 'Model',
    kind: 'variant',
    options: ['embedded', 'model'],
    variants: { embedded: { kind: 'embedded' }, model: { kind: 'model', name: '' } },
    help: 'embedded: a ~0.3M-parameter character-level Qwen3 trained from scratch; model: a Hugging Face model registered by name (Models page).',
  },
  'model.arch': {
    label: 'Architecture',
    kind: 'select',
    options: ['qwen3', 'qwen2', 'llama'],
    def: 'qwen3',
    help: 'The transformers architecture the embedded model is built with.',
  },
  'model.n_kv_head': {
    label: 'KV heads',
    kind: 'int',
    def: 'n_head',
    help: 'Key/value heads (grouped-query attention); must divide the heads.',
  },
  'model.qk_norm_gain': {
    label: 'QK-norm gain',
    kind: 'number',
    def: '1',
    help: 'Qwen3: starting gain of the query/key norms; a tiny model needs > 1 to attend sharply (hf_model.py).',
  },
  'model.name': {
    label: 'Model name',
    kind: 'text',
    help: 'A model under the models folder (npx toolsmith model list); never a path.',
  },
  'model.n_layer': {
    label: 'Layers',
    kind: 'int',
    def: String(E.model.n_layer),
    help: 'Transformer blocks of the embedded model.',
  },
  'model.n_head': {
    label: 'Heads',
    kind: 'int',
    def: String(E.model.n_head),
    help: 'Attention heads per block; n_embd must be divisible by it.',
  },
  'model.n_embd': {
    label: 'Width (n_embd)',
    kind: 'int',
    def: String(E.model.n_embd),
    help: 'Embedding width of the embedded model.',
  },
  'model.block_size': {
    label: 'Context (block_size)',
    kind: 'int',
    def: String(E.model.block_size),
    help: 'Context in characters: prompt + response + tool output must fit.',
  },

  'tokenizer.kind': {
    label: 'Tokenizer',
    kind: 'variant',
    options: ['char', 'model'],
    variants: { char: { kind: 'char' }, model: { kind: 'model' } },
    def: byModel('model', 'char'),
    help: "char: the embedded character vocabulary; model: the named model's own tokenizer.json and chat template.",
  },

  'trainer.ranks': {
    label: 'Ranks',
    kind: 'int',
    def: '1',
    help: 'Ranks on the worker, one group on loopback only: FSDP2 shards the model over them (one per GPU; gloo processes on CPU).',
  },
  'trainer.nodes': {
    label: 'Nodes',
    kind: 'int',
    def: '1',
    help: 'Machines the run spans; more than one runs only on a Ray cluster (docs/scaling-out.md "Ray").',
  },
  'trainer.device': {
    label: 'Device',
    kind: 'select',
    options: ['auto', 'cpu', 'cuda'],
    def: 'auto',
    help: 'cuda refuses to start without one GPU per rank; auto uses GPUs when present.',
  },
  'trainer.microBatchTokens': {
    label: 'Micro-batch tokens',
    kind: 'int',
    def: 'whole batch',
    help: 'Token budget per forward/backward (rows × padded length); gradients accumulate.',
  },
  'trainer.gradientCheckpointing': {
    label: 'Gradient checkpointing',
    kind: 'bool',
    def: 'false',
    help: 'Recompute activations in backward: less memory, ~30% more compute.',
  },
  'trainer.lora': {
    label: 'LoRA',
    kind: 'toggle',
    on: { rank: 16, alpha: 32 },
    off: null,
    help: 'Train low-rank adapters (peft) on a named model; exports merge them.',
  },
  'trainer.lora.rank': { label: 'LoRA rank', kind: 'int', def: '16', help: 'Rank r of each adapter.' },
  'trainer.lora.alpha': { label: 'LoRA alpha', kind: 'number', def: '32', help: 'Scale: the update is B·A·alpha/r.' },
  'trainer.lora.dropout': { label: 'LoRA dropout', kind: 'number', def: '0', help: 'Dropout on the adapter input.' },
  'trainer.lora.targetModules': {
    label: 'Target modules',
    kind: 'list',
    def: 'q,k,v,o,gate,up,down _proj',
    help: 'Module names that get adapters.',
  },

  'engine.kind': {
    label: 'Rollout engine',
    kind: 'variant',
    options: ['embedded', 'openai', 'ray'],
    variants: {
      embedded: { kind: 'embedded' },
      openai: { kind: 'openai', urls: [] },
      ray: { kind: 'ray', server: 'serve-model' },
    },
    help: 'embedded: the ONNX engine on this worker; openai: vLLM/SGLang servers (weight sync after each update: docs/scaling-out.md "Weight sync"); ray: servers the run starts on its Ray cluster (a run launched on Ray).',
  },
  'engine.weights': {
    label: 'Engine weights',
    kind: 'select',
    options: ['float32', 'int8', 'int4'],
    def: 'float32',
    help: "How the ONNX export stores the embedded engine's weights: int8/int4 decode single requests faster on CPU, with a larger log-prob mismatch against the trainer (docs/benchmarks.md bench:engine).",
  },
  'engine.server': {
    label: 'Server on Ray',
    kind: 'select',
    options: ['serve-model', 'sglang', 'vllm'],
    help: "serve-model: Toolsmith's, on CPU nodes; sglang / vllm: their command lines on GPU nodes (not run on these machines).",
  },
  'engine.replicas': {
    label: 'Servers',
    kind: 'int',
    def: '1',
    help: 'Rollout servers on the cluster, one per node at most.',
  },
  'engine.syncTimeoutMs': {
    label: 'Reload timeout (ms)',
    kind: 'int',
    def: '600000',
    help: 'Most milliseconds a weight reload may take on any one server.',
  },
  'engine.gpusPerServer': {
    label: 'GPUs per server',
    kind: 'int',
    def: '0',
    help: 'Tensor-parallel size of each SGLang/vLLM server.',
  },
  'engine.urls': { label: 'Server URLs', kind: 'list', help: 'OpenAI-compatible base URLs, comma-separated.' },
  'engine.model': {
    label: 'Served model id',
    kind: 'text',
    def: 'first of /v1/models',
    help: 'The model name requests carry (default: the first id the first server lists).',
  },
  'engine.totalTokens': {
    label: 'Server token budget',
    kind: 'int',
    def: String(1 << 20),
    help: 'Tokens the servers hold at once, all URLs together; requests are admitted against it.',
  },
  'engine.timeoutMs': {
    label: 'Request timeout (ms)',
    kind: 'int',
    def: '60000',
    help: 'Longest silence on one generation request before it is retried elsewhere.',
  },
  'engine.weightSync': {
    label: 'Weight sync',
    kind: 'toggle',
    on: { mode: 'sglang' },
    off: undefined,
    help: 'Push the trainer\'s weights to every server after each update (needed to train on them; docs/scaling-out.md "Weight sync").',
  },
  'engine.weightSync.mode': {
    label: 'Reload API',
    kind: 'select',
    options: WEIGHT_SYNC_MODES,
    def: 'sglang',
    help: 'sglang: /update_weights_from_disk; vllm: /collective_rpc reload_weights (dev mode, <dir>/current); vllm-lora: /v1/load_lora_adapter (needs LoRA).',
  },
  'engine.weightSync.dir': {
    label: 'Weight folder name',
    kind: 'text',
    def: 'the run id',
    help: 'Subfolder of TOOLSMITH_WEIGHT_SYNC_DIR the versions go into (a name, not a path); the servers must see it at the same path.',
  },
  'engine.weightSync.onnx': {
    label: 'Also write ONNX',
    kind: 'bool',
    def: 'false',
    help: 'Write <version>/onnx too: what toolsmith serve-model loads.',
  },
  'engine.weightSync.timeoutMs': {
    label: 'Reload timeout (ms)',
    kind: 'int',
    def: '600000',
    help: 'Longest a reload may take on any one server before the step fails naming it.',
  },

  'template.toolName': {
    label: 'Tool name',
    kind: 'text',
    def: byModel('execute_python_code_with_standard_io', 'python'),
    help: "The one tool's function name (paper: execute_python_code_with_standard_io; embedded: python).",
  },
  'template.reasonTag': {
    label: 'Reasoning tag',
    kind: 'text',
    def: 'reason',
    help: "Each assistant turn starts with <reason> (the paper's figure shows <think>).",
  },
  'template.answerTag': {
    label: 'Answer tag',
    kind: 'text',
    def: 'answer',
    help: 'The one final answer, holding \\boxed{…}, goes inside this tag.',
  },
  'template.variant': {
    label: 'Prompt variant',
    kind: 'select',
    options: ['full', 'compact', 'minimal'],
    def: byModel('full', 'minimal'),
    help: "System prompt: full (the paper's, with # Tools), compact, or minimal (fits a 512-character context).",
  },
  'template.toolFormat.style': {
    label: 'Tool output style',
    kind: 'select',
    options: ['paper', 'released'],
    def: 'paper',
    help: 'paper: raw stdout or "tool call failed"; released: "Tool call success\\nstdout: …" (code-judge).',
  },
  'template.toolFormat.maxFieldChars': {
    label: 'Cut stdout/stderr at',
    kind: 'int',
    nullable: true,
    def: 'no cut',
    help: 'Cut stdout and stderr each to this many characters (code-judge: 1000); empty = no cut (paper).',
  },
  'template.toolFormat.middle': {
    label: 'Middle truncation',
    kind: 'toggle',
    on: { head: 128, tail: 128 },
    off: null,
    help: 'Keep only the first head + last tail characters of a tool response (verl: 128 + 128); off in the paper.',
  },
  'template.toolFormat.middle.head': {
    label: 'Head chars',
    kind: 'int',
    help: 'Characters kept from the start of the tool response.',
  },
  'template.toolFormat.middle.tail': {
    label: 'Tail chars',
    kind: 'int',
    help: 'Characters kept from the end of the tool response.',
  },

  ...toolFields('tool.', ''),

  'verifier.mode': {
    label: 'Answer extraction',
    kind: 'select',
    options: ['answer', 'boxed'],
    def: 'answer',
    help: 'answer (the paper): the \\boxed{} inside <answer>; boxed (the released code): the last \\boxed{} anywhere.',
  },
  'verifier.tolerance.rel': {
    label: 'Relative tolerance',
    kind: 'number',
    def: '1e-8',
    help: 'For numbers that are not both integers; integers always compare exactly.',
  },
  'verifier.tolerance.abs': {
    label: 'Absolute tolerance',
    kind: 'number',
    def: '1e-9',
    help: 'For numbers that are not both integers.',
  },
  'verifier.timeLimitMs': {
    label: 'Symbolic check limit (ms)',
    kind: 'int',
    def: '2000',
    help: 'Time limit of each symbolic / sampling check (a worker thread, terminated past it).',
  },
  'verifier.sympy': {
    label: 'sympy last resort',
    kind: 'bool',
    def: 'true',
    help: 'Ask sympy in the sandbox when the faster steps cannot decide.',
  },
  'verifier.sympyTimeLimitS': {
    label: 'sympy limit (s)',
    kind: 'number',
    def: '5',
    help: 'Time limit of the sympy call in the sandbox.',
  },
  'verifier.mathVerify': {
    label: 'Math-Verify',
    kind: 'select',
    options: ['fallback', 'always', 'off'],
    def: 'fallback',
    help: 'Math-Verify in the sandbox, the authoritative last step: fallback (the released code) for what the fast path cannot settle, always for every answer, or off.',
  },
  'verifier.mathVerifyTimeLimitS': {
    label: 'Math-Verify limit (s)',
    kind: 'number',
    def: '5',
    help: 'Time limit of each Math-Verify check (the sandbox ends it; no signal.alarm).',
  },

  eval: {
    label: 'Periodic evaluation',
    kind: 'toggle',
    on: { datasets: [{ kind: 'generated', split: 'test', n: 32, seed: 7 }] },
    help: 'Evaluate pass@1 averaged over k samples per problem (§8), after each stage or every N RL steps.',
  },
  'eval.k': {
    label: 'Samples per problem (k)',
    kind: 'int',
    def: byModel(R.eval.k, E.eval.k),
    help: 'pass@1 is averaged over k samples per problem (report: 16).',
  },
  'eval.temperature': {
    label: 'Temperature',
    kind: 'number',
    def: String(R.eval.temperature),
    help: 'Evaluation sampling temperature (report: 0.6).',
  },
  'eval.maxTokens': {
    label: 'Max tokens',
    kind: 'int',
    def: byModel(R.eval.maxTokens, 'block_size − prompt'),
    help: 'Response budget per sample (report: 30K tokens; embedded: block_size − prompt).',
  },
  'eval.maxTurns': {
    label: 'Max turns',
    kind: 'int',
    def: byModel(R.eval.maxTurns, E.eval.maxTurns),
    help: 'Most assistant turns per sample (report: 30).',
  },
  'eval.everySteps': {
    label: 'Every N RL steps',
    kind: 'int',
    nullable: true,
    def: 'after each stage',
    help: 'Evaluate every N RL steps (counted across stages); empty = only after each stage.',
  },
  'eval.atStart': {
    label: 'Evaluate at start',
    kind: 'bool',
    def: 'false',
    help: "Also evaluate the starting model before the first stage: a pretrained model's baseline with the tool template.",
  },
  'budget.gpuHours': {
    label: 'Budget: GPU-hours',
    kind: 'number',
    nullable: true,
    def: 'none',
    help: 'The run is refused before it starts when its plan (npx toolsmith plan) takes more GPU-hours than this.',
  },
  'budget.storageGB': {
    label: 'Budget: storage (GB)',
    kind: 'number',
    nullable: true,
    def: 'none',
    help: 'The run is refused before it starts when its plan stores more trajectories and token records than this.',
  },
};

const stageCommon: Catalogue = {
  type: { label: 'Type', kind: 'fixed', help: 'sft or rl (set when the stage is added).' },
  name: {
    label: 'Stage name',
    kind: 'text',
    help: "Unique name of the stage (shown in the timeline and the run's events).",
  },
};

export const SFT_FIELDS: Catalogue = {
  ...stageCommon,
  'data.kind': {
    label: 'Demonstrations',
    kind: 'variant',
    options: ['generated', 'stored'],
    variants: { generated: { kind: 'generated', n: 1000 }, stored: { kind: 'stored', name: '', n: 300 } },
    help: "generated: demos made from train-split arith problems; stored: demos made from a dataset's worked solutions (GSM8K's calculator notes become the Python call), e.g. gsm8k-test-100.",
  },
  'data.name': {
    label: 'Dataset',
    kind: 'text',
    help: 'A stored dataset whose problems carry worked solutions (npx toolsmith dataset add gsm8k-test-100).',
  },
  'data.version': { label: 'Dataset version', kind: 'int', def: 'latest', help: 'Default: the latest version.' },
  'data.split': {
    label: 'Split',
    kind: 'select',
    options: ['train', 'test', 'all'],
    def: 'train',
    help: 'Split the demonstrations are made from (default train: never the evaluated problems).',
  },
  'data.task': { label: 'Task', kind: 'fixed', def: 'arith', help: 'The generated task (arith is the only one).' },
  'data.n': { label: 'Demonstrations', kind: 'int', help: 'Number of demonstrations.' },
  'data.seed': { label: 'Data seed', kind: 'int', def: '1', help: 'Seed of the generated demonstrations.' },
  'data.shares.tool': {
    label: 'Share: tool',
    kind: 'number',
    def: '0.7',
    help: 'Share of clean tool-call demos (normalised with the others).',
  },
  'data.shares.recover': {
    label: 'Share: recover',
    kind: 'number',
    def: '0.15',
    help: 'Share of demos where a call fails and the next one fixes it.',
  },
  'data.shares.no_tool': {
    label: 'Share: no tool',
    kind: 'number',
    def: '0.15',
    help: 'Share of demos that answer an easy problem without the tool.',
  },
  'data.shares.direct': {
    label: 'Share: direct',
    kind: 'number',
    def: '0',
    help: 'Share of demos that answer a tool-worthy problem straight away, without the tool (right answer, no working).',
  },
  'data.families': familiesField,
  'data.difficulty': difficultyField,
  epochs: {
    label: 'Epochs',
    kind: 'int',
    def: String(R.sft.epochs),
    help: 'Non-reasoning SFT: 3 epochs in the report (§7).',
  },
  lr: {
    label: 'Learning rate',
    kind: 'number',
    def: byModel(R.sft.lr, E.sft.lr),
    help: 'AdamW peak learning rate (report: 5e-6; embedded: 3e-3).',
  },
  warmupRatio: {
    label: 'Warm-up ratio',
    kind: 'number',
    def: String(R.sft.warmupRatio),
    help: 'Share of the steps warming up linearly (report: 4%).',
  },
  schedule: {
    label: 'Schedule',
    kind: 'select',
    options: ['cosine', 'constant'],
    def: R.sft.schedule,
    help: 'Learning-rate decay after warm-up (report: cosine).',
  },
  batch: {
    label: 'Batch',
    kind: 'int',
    def: byModel(R.sft.batch, E.sft.batch),
    help: 'Demonstrations per optimiser step (report: 128; embedded: 8).',
  },
  maxLength: {
    label: 'Max length',
    kind: 'int',
    def: byModel(R.sft.maxLength, 'block_size'),
    help: 'Longest tokenised demo kept; longer ones are dropped (embedded: block_size).',
  },
  maxSteps: {
    label: 'Max steps',
    kind: 'int',
    def: 'epochs × ⌈n / batch⌉',
    help: 'Stop after this many optimiser steps (tuning, tests).',
  },
};

export const RL_FIELDS: Catalogue = {
  ...stageCommon,
  ...sourceFields('data.', 'train'),
  steps: {
    label: 'Steps',
    kind: 'int',
    def: byModel(R.rl.steps, E.rl.steps),
    help: 'Optimiser steps, one fully on-policy update each (report: 300, 85, 125 in stages 1–3).',
  },
  promptsPerStep: {
    label: 'Prompts per step',
    kind: 'int',
    def: byModel(R.rl.promptsPerStep, E.rl.promptsPerStep),
    help: 'Questions per step (paper: 512; released scripts: 128).',
  },
  rolloutsPerPrompt: {
    label: 'Rollouts per prompt (2G)',
    kind: 'int',
    def: byModel(R.rl.rolloutsPerPrompt, E.rl.rolloutsPerPrompt),
    help: '2G: rollouts sampled per question (report: 2G = 32).',
  },
  keep: {
    label: 'Kept per group (G)',
    kind: 'int',
    def: 'half of 2G (all without RoC)',
    help: 'G: rollouts kept after Resample-on-Correct down-sampling (report: G = 16).',
  },
  'roc.enabled': {
    label: 'RoC on',
    kind: 'bool',
    def: 'true',
    help: 'Resample-on-Correct (§5); off = plain GRPO, keeping every rollout of a non-dropped group.',
  },
  'roc.positiveSelection': {
    label: 'Positive selection',
    kind: 'select',
    options: ['weighted', 'lowest'],
    def: 'weighted',
    help: 'Keep positives weighted by 1 / p_total (paper) or the lowest p_total (released code).',
  },
  'roc.minPerSign': {
    label: 'Min per sign',
    kind: 'int',
    def: '2',
    help: 'Keep at least this many positives and negatives where available (released code: 2).',
  },
  'roc.dropEqualReward': {
    label: 'Drop equal-reward groups',
    kind: 'bool',
    def: 'true',
    help: 'Drop groups whose rewards are all 0 or all 1: they carry no signal (released code).',
  },
  epsLow: {
    label: 'ε_low',
    kind: 'number',
    def: String(R.rl.epsLow),
    help: "ε_low = 0.2: lower clip of the ratio (1 − ε_low); the report's value.",
  },
  epsHigh: {
    label: 'ε_high',
    kind: 'number',
    def: String(R.rl.epsHigh),
    help: "ε_high = 0.28 (Clip-Higher): upper clip of the ratio; the report's value.",
  },
  dualClip: {
    label: 'Dual-clip c',
    kind: 'number',
    nullable: true,
    def: 'off',
    help: 'Dual-clip constant c > 1 on negative advantages (verl: 3); empty = off (paper).',
  },
  'tis.mode': {
    label: 'Mismatch correction (TIS)',
    kind: 'select',
    options: TIS_MODES,
    def: R.rl.tis.mode,
    help: "Truncated importance sampling on π_trainer / π_engine: token = min(ρ, C) per token, sequence = one capped weight per trajectory, mask = drop tokens with ρ outside [1/C, C], off. Needs the engine's log-probs; without them the step runs uncorrected.",
  },
  'tis.cap': {
    label: 'TIS cap C',
    kind: 'number',
    def: String(R.rl.tis.cap),
    help: 'C > 1: the largest weight (token, sequence) or the band [1/C, C] (mask); TRL and verl use 2–3.',
  },
  lr: {
    label: 'Learning rate',
    kind: 'number',
    def: byModel(R.rl.lr, E.rl.lr),
    help: 'AdamW learning rate, constant after warm-up (report: 1e-6; embedded: 1e-4).',
  },
  warmupSteps: {
    label: 'Warm-up steps',
    kind: 'int',
    def: byModel(R.rl.warmupSteps, E.rl.warmupSteps),
    help: 'Linear warm-up steps (report: 20).',
  },
  temperature: {
    label: 'Temperature',
    kind: 'number',
    def: String(R.rl.temperature),
    help: 'Rollout sampling temperature (report: 1.0).',
  },
  maxResponseTokens: {
    label: 'Max response tokens',
    kind: 'int',
    def: byModel(R.rl.maxResponseTokens, 'block_size − prompt'),
    help: 'Response budget per trajectory, tool tokens included (report: 8K in stage 1, 12K in stages 2–3).',
  },
  maxTurns: {
    label: 'Max turns',
    kind: 'int',
    def: byModel(R.rl.maxTurns, E.rl.maxTurns),
    help: 'Most assistant turns per rollout (paper: 10 in stages 1–2, 15 in stage 3; released code: 5).',
  },
  tool: {
    label: 'Own tool limits',
    kind: 'toggle',
    on: { timeoutS: 4, memoryMb: 1024, session: false, seedCalls: false },
    help: "Override the recipe's tool limits for this stage (default: the recipe's).",
  },
  ...toolFields('tool.', ' in this stage'),
  'dataFilter.kind': {
    label: 'Problems',
    kind: 'variant',
    options: ['all', 'hard'],
    variants: { all: { kind: 'all' }, hard: { kind: 'hard', k: R.rl.hardK } },
    help: 'all, or the hard subset: run the policy k× per problem and drop those solved k/k (report: stage 3).',
  },
  'dataFilter.k': {
    label: 'Hard filter k',
    kind: 'int',
    def: String(R.rl.hardK),
    help: 'Rollouts per problem for the hard filter (report: 8).',
  },
  'dataFilter.dropSolved': {
    label: 'Drop solved',
    kind: 'fixed',
    def: 'true',
    help: 'Problems solved k/k are dropped (always).',
  },
  resetOptimizer: {
    label: 'Reset optimiser',
    kind: 'bool',
    def: 'false',
    help: 'Fresh AdamW moments at the start of the stage (report: stage 3).',
  },
  'async.enabled': {
    label: 'Asynchronous steps',
    kind: 'bool',
    def: 'false',
    help: "Generate the next step's rollouts while this step trains (one-step off-policy; TIS corrects the lag). Off: the report's synchronous loop.",
  },
  'async.maxStaleness': {
    label: 'Max staleness',
    kind: 'int',
    def: '1',
    help: 'At most this many updates between the weights a batch was sampled with and the trainer that trains on it (0 = synchronous).',
  },
  'dynamicSampling.enabled': {
    label: 'Dynamic sampling',
    kind: 'bool',
    def: 'false',
    help: "Draw more prompts until the step has promptsPerStep groups with mixed rewards (DAPO; verl filter_groups). Off: the report's loop, equal-reward groups dropped and not replaced.",
  },
  'dynamicSampling.maxGenBatches': {
    label: 'Max generation rounds',
    kind: 'int',
    def: '4',
    help: 'Rounds of generation per step, the first included (verl max_num_gen_batches); short of its groups at the cap, the step trains what it has and reports it.',
  },
  'curriculum.enabled': {
    label: 'Pass-rate curriculum',
    kind: 'bool',
    def: 'false',
    help: "Draw first the problems the current policy solves sometimes (from this run's stored rollouts and evaluations), then untried ones; skip those solved always or never.",
  },
  'curriculum.minSamples': {
    label: 'Curriculum min outcomes',
    kind: 'int',
    def: '4',
    help: 'Outcomes a problem needs before "solved always" or "never" counts (fewer: untried).',
  },
  'curriculum.windowSteps': {
    label: 'Curriculum window (steps)',
    kind: 'int',
    def: '20',
    help: 'Only outcomes of the last this-many run steps estimate the pass rate: the current policy, not an old one.',
  },
  'async.partialRollouts': {
    label: 'Partial rollouts',
    kind: 'bool',
    def: 'false',
    help: 'Hand each update to the engine at once: rollouts in flight continue on the new weights from their next turn (each turn keeps its version).',
  },
};

export const EVAL_SOURCE_FIELDS: Catalogue = sourceFields('', 'test');

/** Which source fields a data source of each kind shows. */
export const SOURCE_KEYS = {
  generated: ['kind', 'task', 'split', 'n', 'seed', 'families', 'difficulty'],
  stored: ['kind', 'name', 'version', 'split', 'limit', 'pick'],
} as const;

// ---- New stages and the timeline ---------------------------------------------------------------------------------

function uniqueName(taken: readonly string[], base: string): string {
  if (!taken.includes(base)) return base;
  for (let i = 2; ; i++) if (!taken.includes(`${base}-${i}`)) return `${base}-${i}`;
}

export function stageNames(spec: Spec): string[] {
  const stages = Array.isArray(spec.stages) ? spec.stages : [];
  return stages.map((s) =>
    s && typeof s === 'object' && typeof (s as { name?: unknown }).name === 'string'
      ? (s as { name: string }).name
      : '',
  );
}

/** A new stage with the fewest fields set (everything else defaults). */
export function newStage(type: 'sft' | 'rl', taken: readonly string[]): Spec {
  if (type === 'sft')
    return { type: 'sft', name: uniqueName(taken, 'sft'), data: { kind: 'generated', n: 1000, seed: 1 } };
  return { type: 'rl', name: uniqueName(taken, 'rl'), data: { kind: 'generated', split: 'train', n: 2000, seed: 11 } };
}

export interface TimelineStage {
  name: string;
  type: string;
  steps: number;
}

const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/**
 * Steps per stage as the schema counts them (stageSteps: SFT epochs × ⌈demos / batch⌉ capped by maxSteps; RL
 * steps), filling unset values with the defaults for the model kind. Works on an invalid spec (unknowns count 0).
 */
export function timelineOf(spec: Spec): TimelineStage[] {
  const model: ModelKind = (spec.model as { kind?: unknown } | undefined)?.kind === 'model' ? 'model' : 'embedded';
  const stages = Array.isArray(spec.stages) ? (spec.stages as unknown[]) : [];
  return stages.map((raw) => {
    const s = (raw && typeof raw === 'object' ? raw : {}) as Record<string, unknown>;
    const type = typeof s.type === 'string' ? s.type : '?';
    const name = typeof s.name === 'string' ? s.name : '';
    if (type === 'rl') return { name, type, steps: num(s.steps) ?? (model === 'model' ? R.rl.steps : E.rl.steps) };
    if (type !== 'sft') return { name, type, steps: 0 };
    const n = num((s.data as { n?: unknown } | undefined)?.n) ?? 0;
    const batch = num(s.batch) ?? (model === 'model' ? R.sft.batch : E.sft.batch);
    const epochs = num(s.epochs) ?? R.sft.epochs;
    const steps = batch > 0 ? epochs * Math.ceil(n / batch) : 0;
    return { name, type, steps: Math.min(num(s.maxSteps) ?? Infinity, steps) };
  });
}
