/**
 * Models by name. A model is a Hugging Face-format directory (config.json, *.safetensors, tokenizer.json,
 * tokenizer_config.json with a chat template) directly under the one models folder (TOOLSMITH_MODELS_DIR, default
 * <data>/models); its name is its folder's name. Recipes name a model, never a path: resolveModel is the one place a
 * name becomes a directory, and it accepts only NAME_RE names, so no name reaches outside the folder.
 *
 * The folder itself is the registry (no database rows): a model copied in by hand is listed too. Each model that
 * init or import made carries toolsmith.json, its provenance (source, time, the options or the source directory,
 * and the summary model_tool.py gave). New models appear atomically: they are written into a hidden staging folder
 * inside the models folder (same filesystem) and renamed into place, so a crash never leaves half a model under a name.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { UserError, errorMessage } from '../../contracts/errors.ts';
import { ModelProvenanceSchema, type ModelInfo, type ModelProvenance } from '../../contracts/models.ts';
import { NAME_RE, NAME_RULE } from '../../contracts/names.ts';
import { config } from '../config.ts';
import { PathEscapeError, resolveUnderRoot } from './under-root.ts';

export const PROVENANCE_FILE = 'toolsmith.json';
const execFileP = promisify(execFile);
/** Weights as pickles: never imported (loading one runs code); model_tool.py's inspect refuses a model with only these. */
const PICKLE = /\.(bin|pt|pth|ckpt|pkl|pickle)$/i;

export function modelsDir(): string {
  return config().modelsDir;
}

/** The name, if it is a model name (NAME_RE: no "/", no "..", no leading dot); otherwise a UserError naming `field`. */
export function checkModelName(name: string, field = 'name'): string {
  if (!NAME_RE.test(name)) throw new UserError(`model name "${name}" is not allowed: ${NAME_RULE}`, { field });
  return name;
}

/**
 * Where the model `name` lives (or would live): the name is checked first, then the folder is resolved after
 * symlinks and must stay inside the models folder, its files too (server/models/under-root.ts): a link planted
 * there that leads elsewhere on the host is refused, so no recipe reaches a file outside through it.
 */
export function modelPath(name: string): string {
  checkModelName(name);
  return resolveUnderRoot(modelsDir(), name, { field: 'name', rootLabel: 'the models folder', checkEntries: true });
}

export function modelExists(name: string): boolean {
  return fs.existsSync(path.join(modelPath(name), 'config.json'));
}

/** The directory of the registered model `name`, or a UserError saying there is none and how to add one. */
export function resolveModel(name: string): string {
  const dir = modelPath(name);
  if (!fs.existsSync(path.join(dir, 'config.json'))) {
    throw new UserError(`no model named "${name}" in ${modelsDir()}`, {
      field: 'name',
      fix: 'see `npx toolsmith model list`; add one with `npx toolsmith model init` or `model import DIR --name NAME`',
    });
  }
  return dir;
}

/** Every registered model (a NAME_RE subfolder with a config.json), by name. */
export async function listModels(): Promise<ModelInfo[]> {
  let entries: string[];
  try {
    entries = await fsp.readdir(modelsDir());
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: ModelInfo[] = [];
  for (const name of entries.sort()) {
    if (!NAME_RE.test(name)) continue; // staging folders start with "."
    let dir: string;
    try {
      dir = modelPath(name);
    } catch (e) {
      if (e instanceof PathEscapeError) continue; // a link out of the folder: not a model, and not read
      throw e;
    }
    if (!fs.existsSync(path.join(dir, 'config.json'))) continue; // not a model (e.g. an old cache folder)
    out.push(await readModel(name));
  }
  return out;
}

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);

async function readJson(file: string): Promise<unknown> {
  return JSON.parse(await fsp.readFile(file, 'utf8'));
}

/** The provenance of a model directory (null when it has none, or it is unreadable: then `problem` says why). */
export async function readProvenance(
  dir: string,
): Promise<{ provenance: ModelProvenance | null; problem: string | null }> {
  const file = path.join(dir, PROVENANCE_FILE);
  if (!fs.existsSync(file)) return { provenance: null, problem: null };
  try {
    const r = ModelProvenanceSchema.safeParse(await readJson(file));
    return r.success
      ? { provenance: r.data, problem: null }
      : { provenance: null, problem: `${PROVENANCE_FILE}: ${r.error.issues[0]?.message ?? 'invalid'}` };
  } catch (e) {
    return { provenance: null, problem: `${PROVENANCE_FILE}: ${errorMessage(e)}` };
  }
}

/**
 * One model as lists show it: the shape from config.json (the text config of a multimodal one), the parameter count
 * and dtype from the summary recorded at registration, else from the safetensors headers; the size of its files.
 */
export async function readModel(name: string): Promise<ModelInfo> {
  const dir = modelPath(name);
  const problems: string[] = [];
  let cfg: Record<string, unknown> = {};
  try {
    const raw = (await readJson(path.join(dir, 'config.json'))) as Record<string, unknown>;
    cfg = raw && typeof raw === 'object' ? raw : {};
  } catch (e) {
    problems.push(`config.json: ${errorMessage(e)}`);
  }
  const text = (cfg.text_config && typeof cfg.text_config === 'object' ? cfg.text_config : cfg) as Record<
    string,
    unknown
  >;
  const { provenance, problem } = await readProvenance(dir);
  if (problem) problems.push(problem);
  const s = provenance?.summary ?? {};
  let parameters = num(s.parameters);
  let dtype = str(s.dtype);
  if (parameters === null || dtype === null) {
    try {
      const w = await safetensorsTotals(dir);
      parameters ??= w.parameters;
      dtype ??= w.dtype ?? str(cfg.dtype) ?? str(cfg.torch_dtype);
    } catch (e) {
      problems.push(`weights: ${errorMessage(e)}`);
    }
  }
  const heads = num(text.num_attention_heads);
  const archs = Array.isArray(cfg.architectures) ? cfg.architectures : [];
  let createdAt = provenance?.createdAt ?? null;
  if (!createdAt)
    createdAt = (await fsp.stat(path.join(dir, 'config.json')).catch(() => null))?.mtime.toISOString() ?? null;
  return {
    name,
    dir,
    architecture: str(archs[0]) ?? str(s.architecture),
    modelType: str(cfg.model_type) ?? str(s.model_type),
    parameters,
    layers: num(text.num_hidden_layers),
    hidden: num(text.hidden_size),
    heads,
    kvHeads: num(text.num_key_value_heads) ?? heads,
    vocab: num(text.vocab_size),
    dtype,
    context: num(text.max_position_embeddings),
    sizeBytes: await dirBytes(dir),
    source: provenance?.source ?? 'unknown',
    createdAt,
    importedFrom: provenance?.importedFrom ?? null,
    license: provenance?.license ?? provenance?.gguf?.license ?? null,
    origin: provenance ? describeOrigin(provenance) : null,
    problem: problems.length ? problems.join('; ') : null,
  };
}

/** One line on where a model's weights came from, for lists and the Models page. */
export function describeOrigin(p: ModelProvenance): string | null {
  const parts: string[] = [];
  if (p.package)
    parts.push(
      `${p.package.member.split('/').pop()} from ${p.package.package} ${p.package.version} (${p.package.index})`,
    );
  else if (p.importedFrom) parts.push(`from ${p.importedFrom}`);
  if (p.gguf)
    parts.push(
      `GGUF ${p.gguf.architecture} ${p.gguf.file_type ?? '?'}, dequantised to float32, sha256 ${p.gguf.sha256.slice(0, 12)}…`,
    );
  if (p.init) parts.push(`random weights, seed ${p.init.seed}`);
  return parts.length ? parts.join('; ') : null;
}

/** Bytes of a model directory's files (its top level: HF directories are flat). */
async function dirBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of await fsp.readdir(dir)) {
    const st = await fsp.stat(path.join(dir, name)).catch(() => null);
    if (st?.isFile()) total += st.size;
  }
  return total;
}

const ST_DTYPES: Record<string, string> = {
  F32: 'float32',
  BF16: 'bfloat16',
  F16: 'float16',
  F64: 'float64',
  I8: 'int8',
  U8: 'uint8',
  F8_E4M3: 'float8_e4m3fn',
  F8_E5M2: 'float8_e5m2',
};

/** Elements and main dtype over a model's safetensors files, from their JSON headers only (8-byte length + JSON). */
export async function safetensorsTotals(dir: string): Promise<{ parameters: number | null; dtype: string | null }> {
  const files = (await fsp.readdir(dir)).filter((f) => f.endsWith('.safetensors')).sort();
  if (files.length === 0) return { parameters: null, dtype: null };
  let parameters = 0;
  const byDtype = new Map<string, number>();
  for (const f of files) {
    const fh = await fsp.open(path.join(dir, f), 'r');
    try {
      const len = Buffer.alloc(8);
      await fh.read(len, 0, 8, 0);
      const n = Number(len.readBigUInt64LE(0));
      if (n <= 0 || n > 100 * 1024 * 1024) throw new Error(`${f}: not a safetensors file`);
      const buf = Buffer.alloc(n);
      await fh.read(buf, 0, n, 8);
      const header = JSON.parse(buf.toString('utf8')) as Record<string, { dtype?: string; shape?: number[] }>;
      for (const [k, t] of Object.entries(header)) {
        if (k === '__metadata__' || !Array.isArray(t.shape)) continue;
        const e = t.shape.reduce((a, b) => a * b, 1);
        parameters += e;
        if (t.dtype) byDtype.set(t.dtype, (byDtype.get(t.dtype) ?? 0) + e);
      }
    } finally {
      await fh.close();
    }
  }
  const main = [...byDtype.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  return { parameters, dtype: main ? (ST_DTYPES[main] ?? main) : null };
}

/**
 * Register a new model atomically: `produce(target)` writes the model into `target` (a path that does not exist yet,
 * inside a hidden staging folder of the models folder), then toolsmith.json is added and the folder is renamed to
 * <models>/<name>. An existing name is refused, before and after producing. On any failure nothing is left behind.
 */
export async function createModel(
  name: string,
  produce: (target: string) => Promise<Omit<ModelProvenance, 'createdAt'>>,
): Promise<{ dir: string; provenance: ModelProvenance }> {
  const dir = modelPath(name);
  const taken = () =>
    new UserError(`a model named "${name}" already exists (${dir})`, {
      field: 'name',
      fix: 'choose another --name, or remove that folder first',
    });
  if (fs.existsSync(dir)) throw taken();
  await fsp.mkdir(modelsDir(), { recursive: true, mode: 0o700 });
  const staging = await fsp.mkdtemp(path.join(modelsDir(), `.staging-${name}-`));
  try {
    const target = path.join(staging, name);
    const p = await produce(target);
    const provenance = ModelProvenanceSchema.parse({ ...p, createdAt: new Date().toISOString() });
    await fsp.writeFile(path.join(target, PROVENANCE_FILE), `${JSON.stringify(provenance, null, 2)}\n`, {
      mode: 0o600,
    });
    if (fs.existsSync(dir)) throw taken();
    try {
      await fsp.rename(target, dir);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTEMPTY' || code === 'EEXIST') throw taken();
      throw e;
    }
    return { dir, provenance };
  } finally {
    await fsp.rm(staging, { recursive: true, force: true });
  }
}

/**
 * The files of a model directory into `dest` (created 0700), each copied (a reflink where the filesystem can: no
 * extra space on btrfs or XFS) and made 0600: never a hard link, which its owner could rewrite after the import was
 * checked. Only the top level's regular files, symlinks followed (a Hugging Face cache snapshot is links into its
 * blob store); pickles, sub-folders, dotfiles and an old toolsmith.json are skipped. `linked` is always 0 now (it
 * counted hard links in provenance written before).
 */
export async function copyModelFiles(
  src: string,
  dest: string,
): Promise<{ linked: number; copied: number; skipped: string[] }> {
  await fsp.mkdir(dest, { recursive: true, mode: 0o700 });
  const out = { linked: 0, copied: 0, skipped: [] as string[] };
  for (const name of (await fsp.readdir(src)).sort()) {
    const from = path.join(src, name);
    const st = await fsp.stat(from).catch(() => null);
    if (!st?.isFile() || name.startsWith('.') || PICKLE.test(name) || name === PROVENANCE_FILE) {
      out.skipped.push(name);
      continue;
    }
    const to = path.join(dest, name);
    await copyOne(await fsp.realpath(from), to);
    await fsp.chmod(to, 0o600);
    out.copied++;
  }
  return out;
}

/**
 * One file copied: GNU cp reflinks where it can and keeps holes (a sparse file stays sparse; Node's copyFile would
 * write every zero of it); without cp, Node's copyFile (a reflink where it can, else a full copy).
 */
async function copyOne(from: string, to: string): Promise<void> {
  try {
    await execFileP('cp', ['--reflink=auto', '--sparse=auto', '--no-preserve=all', '--', from, to]);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // no cp on this host: copy here
    await fsp.copyFile(from, to, fs.constants.COPYFILE_EXCL | fs.constants.COPYFILE_FICLONE);
  }
}
