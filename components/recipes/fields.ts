/**
 * The recipe designer's field catalogue: for every recipe field (contracts/recipe.ts RecipeSchema) a label, the kind of
 * control, the default shown as placeholder, and a one-line help drawn from the method (docs/method.md §2–§8).
 * Paths are relative to the object a catalogue describes: RECIPE_FIELDS to the recipe (stages and eval datasets
 * aside), SFT_FIELDS / RL_FIELDS to one stage, EVAL_SOURCE_FIELDS to one evaluation dataset.
 * tests/unit/recipe-designer.test.ts walks the zod schema and checks every field has an entry here.
 */
import { EMBEDDED_DEFAULTS, REPORT_DEFAULTS } from '../../contracts/recipe.ts';
import { WEIGHT_SYNC_MODES } from '../../contracts/engine.ts';
import { byModel, type Catalogue, toolFields } from './field-def.ts';

export * from './field-def.ts';
export * from './stage-fields.ts';
export * from './timeline.ts';

const R = REPORT_DEFAULTS;
const E = EMBEDDED_DEFAULTS;

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
    def: '1 GiB of logits',
    help: "Token budget per forward/backward (rows × padded length); gradients accumulate. Unset: what keeps one round's float32 logits within 1 GiB (5,461 tokens for SmolLM2's 49,152-token vocabulary; one round for the embedded model).",
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
  'engine.device': {
    label: 'Engine device',
    kind: 'select',
    options: ['cpu', 'cuda'],
    def: 'cpu',
    help: "Where the embedded engine decodes: cuda runs it on the worker's GPU through onnxruntime's CUDA provider (installed apart: ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node); a worker without either refuses the run by name.",
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
