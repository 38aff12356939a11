/**
 * `npx toolsmith model init|import|list|check`: models by name, in the one models folder (TOOLSMITH_MODELS_DIR).
 * The registry (server/models/registry.ts) owns names and folders; model_tool.py (through workers/trainer/model-tool.ts)
 * writes, inspects and loads models. Neither needs the database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../contracts/errors.ts';
import { MODEL_ARCHS, ModelToolSummarySchema, type ModelArch, type ModelInfo, type ModelToolSummary } from '../contracts/models.ts';
import { checkModelName, createModel, linkModelFiles, listModels, modelExists, modelPath, modelsDir, resolveModel } from '../server/models/registry.ts';
import { checkModel, initModel, inspectModel } from '../workers/trainer/model-tool.ts';
import { parseFlags } from './args.ts';
import type { Command } from './commands.ts';

const USAGE = `init|import|list|check ...

  model init --name NAME --layers L --hidden H --heads A [--kv-heads K] --tokenizer char|FILE
             [--arch qwen3|qwen2|llama] [--block-size N] [--intermediate I] [--seed S]
      writes a randomly initialised Hugging Face-format model (config.json, model.safetensors, tokenizer.json,
      tokenizer_config.json with a chat template) under the models folder as NAME. --tokenizer char: the embedded
      character vocabulary; FILE: a tokenizer.json (or a folder holding one), e.g. Qwen3's; its tokenizer_config.json
      is used when it sits beside it. Defaults: --arch qwen3, --kv-heads = --heads, --block-size 512 with char and
      4096 with a file, the MLP 4 × --hidden, --seed 0.

  model import DIR --name NAME
      checks a local HF-format model (supported decoder-only architecture, safetensors weights that cover every
      parameter, dtype float32/bfloat16/float16, tokenizer.json, a chat template) and registers it as NAME: its
      files are hard-linked into the models folder (copied across filesystems). Each problem is printed; nothing
      is registered unless there is none.

  model list [--json]
      the registered models: architecture, parameters, shape, vocabulary, dtype, context, size, source

  model check NAME [--max-load-bytes N]
      loads NAME with transformers (weights under 2 GB: a real load and one forward pass; larger: built on the meta
      device and checked against the safetensors headers) and prints one JSON line`;

const positiveInt = (f: Record<string, unknown>, key: string, required: boolean): number | undefined => {
  const v = f[key];
  if (v === undefined) {
    if (required) throw new UserError(`model init needs --${key}`, { field: `--${key}`, fix: 'see `npx toolsmith model --help`' });
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw new UserError(`--${key} must be a positive integer, not ${v}`, { field: `--${key}` });
  return v;
};

function requireName(f: Record<string, unknown>, sub: string): string {
  if (typeof f.name !== 'string' || f.name === '') throw new UserError(`model ${sub} needs --name NAME`, { field: '--name' });
  try {
    return checkModelName(f.name, '--name');
  } catch (e) {
    throw new UserError(`--name: ${(e as Error).message}`, { field: '--name' });
  }
}

function refuseTaken(name: string) {
  if (modelExists(name) || fs.existsSync(modelPath(name))) {
    throw new UserError(`--name: a model named "${name}" already exists (${modelPath(name)})`, { field: '--name', fix: 'choose another name; `npx toolsmith model list` shows the taken ones' });
  }
}

/** A tokenizer flag as a tokenizer.json path ('char' stays 'char'); a folder means its tokenizer.json. */
function tokenizerArg(v: unknown): 'char' | string {
  if (typeof v !== 'string' || v === '') throw new UserError('model init needs --tokenizer char|FILE', { field: '--tokenizer', fix: 'char for the embedded character vocabulary, or the path of a tokenizer.json' });
  if (v === 'char') return v;
  const p = path.resolve(v);
  if (!fs.existsSync(p)) throw new UserError(`--tokenizer: ${p} does not exist`, { field: '--tokenizer', fix: 'give char, or the path of a tokenizer.json' });
  if (fs.statSync(p).isDirectory()) {
    if (!fs.existsSync(path.join(p, 'tokenizer.json'))) throw new UserError(`--tokenizer: ${p} holds no tokenizer.json`, { field: '--tokenizer' });
    return path.join(p, 'tokenizer.json');
  }
  return p;
}

const fmtCount = (n: number | null) => n === null ? '—' : n >= 1e9 ? `${(n / 1e9).toFixed(2)}B` : n >= 1e6 ? `${(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}K` : String(n);
const fmtBytes = (n: number | null) => n === null ? '—' : n >= 2 ** 30 ? `${(n / 2 ** 30).toFixed(2)} GiB` : n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MiB` : n >= 2 ** 10 ? `${(n / 2 ** 10).toFixed(1)} KiB` : `${n} B`;

function describe(s: Partial<ModelToolSummary>): string {
  return `${s.architecture ?? s.model_type ?? '?'}, ${fmtCount(s.parameters ?? null)} parameters, ${s.layers ?? '?'} layers × ${s.hidden ?? '?'} hidden, `
    + `${s.heads ?? '?'} heads (${s.kv_heads ?? '?'} kv), vocab ${s.vocab ?? '?'}, ${s.dtype ?? '?'}, context ${s.block_size ?? '?'}, ${fmtBytes(s.size_bytes ?? null)}`;
}

async function init(args: string[]) {
  const f = parseFlags(args, { name: 'string', arch: 'string', layers: 'number', hidden: 'number', heads: 'number', 'kv-heads': 'number', tokenizer: 'string', 'block-size': 'number', intermediate: 'number', seed: 'number' });
  const name = requireName(f, 'init');
  const arch = (f.arch ?? 'qwen3') as string;
  if (!(MODEL_ARCHS as readonly string[]).includes(arch)) throw new UserError(`--arch must be one of ${MODEL_ARCHS.join(', ')}, not "${arch}"`, { field: '--arch' });
  const layers = positiveInt(f, 'layers', true)!;
  const hidden = positiveInt(f, 'hidden', true)!;
  const heads = positiveInt(f, 'heads', true)!;
  const kvHeads = positiveInt(f, 'kv-heads', false) ?? heads;
  const tokenizer = tokenizerArg(f.tokenizer);
  const blockSize = positiveInt(f, 'block-size', false) ?? (tokenizer === 'char' ? 512 : 4096);
  const intermediate = positiveInt(f, 'intermediate', false);
  const seed = f.seed === undefined ? 0 : f.seed;
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0) throw new UserError(`--seed must be a non-negative integer, not ${seed}`, { field: '--seed' });
  refuseTaken(name);
  const opts = { arch: arch as ModelArch, layers, hidden, heads, kvHeads, blockSize, intermediate, seed, tokenizer };
  const { dir, provenance } = await createModel(name, async (target) => {
    const r = await initModel({ ...opts, out: target });
    return { source: 'init', arch: r.model_type, init: opts, summary: ModelToolSummarySchema.parse(r) };
  });
  console.log(`initialised ${name}: ${describe(provenance.summary ?? {})} → ${dir}`);
  return 0;
}

async function importModel(positional: string | undefined, args: string[]) {
  const f = parseFlags(args, { name: 'string' });
  if (!positional) throw new UserError('model import needs a DIR', { field: 'DIR', fix: 'npx toolsmith model import DIR --name NAME' });
  const name = requireName(f, 'import');
  const src = path.resolve(positional);
  if (!fs.existsSync(src) || !fs.statSync(src).isDirectory()) throw new UserError(`DIR: ${src} is not a directory`, { field: 'DIR' });
  refuseTaken(name);
  const report = await inspectModel(src);
  for (const w of report.warnings) console.error(`warning: ${w.field}: ${w.message}`);
  if (!report.ok) {
    for (const p of report.problems) console.error(`toolsmith model import: ${p.field}: ${p.message}`);
    console.error(`toolsmith model import: ${src} was not imported (${report.problems.length} problem(s) above)`);
    return 2;
  }
  const { dir, provenance } = await createModel(name, async (target) => {
    const files = await linkModelFiles(src, target);
    return { source: 'import', arch: report.summary.model_type, importedFrom: src, files, summary: report.summary };
  });
  const files = provenance.files!;
  console.log(`imported ${name} from ${src}: ${describe(report.summary)}; ${files.linked} file(s) hard-linked, ${files.copied} copied${files.skipped.length ? `, skipped ${files.skipped.join(', ')}` : ''} → ${dir}`);
  return 0;
}

function table(models: ModelInfo[]) {
  const rows = models.map((m) => [
    m.name, m.architecture ?? m.modelType ?? '?', fmtCount(m.parameters), String(m.layers ?? '—'), String(m.hidden ?? '—'),
    m.heads === null ? '—' : `${m.heads}/${m.kvHeads ?? m.heads}`, String(m.vocab ?? '—'), m.dtype ?? '—', String(m.context ?? '—'),
    fmtBytes(m.sizeBytes), m.source, m.createdAt ? m.createdAt.slice(0, 19).replace('T', ' ') : '—',
  ]);
  const head = ['NAME', 'ARCHITECTURE', 'PARAMS', 'LAYERS', 'HIDDEN', 'HEADS/KV', 'VOCAB', 'DTYPE', 'CONTEXT', 'SIZE', 'SOURCE', 'CREATED'];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(width[i]!)).join('  ').trimEnd();
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  for (const m of models) if (m.problem) console.log(`  ${m.name}: ${m.problem}`);
}

export const modelCommand: Command = {
  name: 'model',
  summary: 'models by name: init a random HF-format model, import a local one, list them, check one loads',
  usage: USAGE,
  async run(args) {
    const [sub, ...rest] = args;
    const positional = rest[0] !== undefined && !rest[0].startsWith('--') ? rest[0] : undefined;
    const flagArgs = positional !== undefined ? rest.slice(1) : rest;
    if (sub === 'init') {
      if (positional) throw new UserError(`unexpected argument "${positional}"`, { fix: 'model init takes only options (--name NAME …)' });
      return init(rest);
    }
    if (sub === 'import') return importModel(positional, flagArgs);
    if (sub === 'list') {
      if (positional) throw new UserError(`unexpected argument "${positional}"`);
      const f = parseFlags(flagArgs, { json: 'boolean' });
      const models = await listModels();
      if (f.json) { console.log(JSON.stringify(models)); return 0; }
      if (models.length === 0) { console.log(`no models in ${modelsDir()} — add one with \`npx toolsmith model init\` or \`model import DIR --name NAME\``); return 0; }
      table(models);
      return 0;
    }
    if (sub === 'check') {
      const f = parseFlags(flagArgs, { 'max-load-bytes': 'number' });
      if (!positional) throw new UserError('model check needs a NAME', { field: 'NAME', fix: 'see `npx toolsmith model list`' });
      const maxLoadBytes = f['max-load-bytes'];
      if (maxLoadBytes !== undefined && (typeof maxLoadBytes !== 'number' || !Number.isInteger(maxLoadBytes) || maxLoadBytes < 0)) {
        throw new UserError(`--max-load-bytes must be a non-negative integer, not ${maxLoadBytes}`, { field: '--max-load-bytes' });
      }
      const dir = resolveModel(positional);
      const r = await checkModel(dir, { maxLoadBytes: maxLoadBytes as number | undefined });
      console.log(JSON.stringify({ name: positional, ...r }));
      return 0;
    }
    throw new UserError(sub ? `unknown model subcommand "${sub}"` : 'model needs a subcommand', { fix: 'use `npx toolsmith model init`, `model import DIR --name NAME`, `model list` or `model check NAME` (see --help)' });
  },
};
