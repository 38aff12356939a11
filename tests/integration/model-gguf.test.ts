// @no-database: models live in a folder, not in the database; runs once.
// `model import --gguf`: GGUF files the test writes itself with the `gguf` package from random Llama and Qwen3
// models (Q8_0 weights, F32 norms, a byte-level BPE tokenizer and a chat template, Llama's q/k rows permuted as
// llama.cpp's converter does) become HF directories whose logits equal the source model's within Q8_0's error, with
// their provenance (sha256, quantisation, dequantised) in toolsmith.json and on `model list`. A file of another
// kind, a truncated one, an unsupported architecture and one without a chat template are refused by name, and
// nothing is left in the models folder.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ModelProvenanceSchema } from '../../contracts/models.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/toolsmith.mjs');
const WRITER = path.join(ROOT, 'tests/helpers/write_gguf.py');
const PY = trainerPython();
const ready = spawnSync(PY, ['-c', 'import torch, transformers, gguf'], { stdio: 'ignore' }).status === 0;
const skip = ready ? false : `needs ${PY} with torch, transformers and gguf (node scripts/setup.mjs builds it)`;

let tmp: string;
let models: string;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-gguf-'));
  models = path.join(tmp, 'models');
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'model', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, TOOLSMITH_MODELS_DIR: models, TRANSFORMERS_VERBOSITY: 'error' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, all: `${r.stdout}\n${r.stderr}` };
}

function py(...args: string[]): string {
  const r = spawnSync(PY, [WRITER, ...args], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim().split('\n').pop()!;
}

/** Write a GGUF; the source model's logits for the helper's fixed prompt. */
function writeGguf(file: string, ...flags: string[]): number[][] {
  return JSON.parse(py('write', file, ...flags)).logits;
}

const maxAbsDiff = (a: number[][], b: number[][]) =>
  Math.max(...a.flatMap((row, i) => row.map((v, j) => Math.abs(v - b[i]![j]!))));

/** What is in the models folder besides registered models: nothing may be left by a refused import. */
const leftovers = () => (fs.existsSync(models) ? fs.readdirSync(models) : []);

describe('model import --gguf', { skip }, () => {
  for (const arch of ['llama', 'qwen2', 'qwen3']) {
    test(`a ${arch} GGUF (Q8_0) becomes an HF directory with the source's logits and its provenance`, () => {
      const file = path.join(tmp, `${arch}.gguf`);
      const source = writeGguf(file, '--arch', arch);
      const r = cli('import', '--gguf', file, '--name', `tiny-${arch}`);
      assert.equal(r.code, 0, r.all);
      assert.match(r.stdout, new RegExp(`imported tiny-${arch} .*GGUF ${arch} Q8_0`));
      const dir = path.join(models, `tiny-${arch}`);
      for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'toolsmith.json'])
        assert.ok(fs.existsSync(path.join(dir, f)), `${f} in the imported folder`);
      const imported = JSON.parse(py('logits', dir)).logits as number[][];
      // Q8_0 keeps each weight within half a step of 1/127 of its block's largest: the logits move by ~1e-2.
      const diff = maxAbsDiff(source, imported);
      assert.ok(diff < 0.05, `logits after import within Q8_0's error of the source: max |Δ| = ${diff}`);
      assert.ok(
        diff > 0,
        'the weights went through Q8_0 (a difference of exactly 0 would mean the test compared a model with itself)',
      );
      const prov = ModelProvenanceSchema.parse(JSON.parse(fs.readFileSync(path.join(dir, 'toolsmith.json'), 'utf8')));
      assert.equal(prov.source, 'import');
      assert.equal(prov.importedFrom, file);
      assert.equal(prov.gguf?.sha256, createHash('sha256').update(fs.readFileSync(file)).digest('hex'));
      assert.equal(prov.gguf?.architecture, arch);
      assert.equal(prov.gguf?.file_type, 'Q8_0');
      assert.equal(prov.gguf?.dequantized, true);
      assert.equal(prov.summary?.dtype, 'float32');
      assert.ok((prov.gguf?.tensor_types.Q8_0 ?? 0) > 0);
      const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
      assert.equal(
        cfg.quantization_config,
        undefined,
        'no quantisation marker left: the folder loads as a plain model',
      );
      const tpl = fs.existsSync(path.join(dir, 'chat_template.jinja'))
        ? fs.readFileSync(path.join(dir, 'chat_template.jinja'), 'utf8')
        : JSON.parse(fs.readFileSync(path.join(dir, 'tokenizer_config.json'), 'utf8')).chat_template;
      assert.match(tpl, /<\|im_start\|>/, 'the chat template came across');
      const list = cli('list');
      assert.equal(list.code, 0, list.all);
      assert.match(list.stdout, new RegExp(`tiny-${arch}: from .*GGUF ${arch} Q8_0, dequantised to float32, sha256`));
      const json = JSON.parse(cli('list', '--json').stdout) as { name: string; origin: string | null }[];
      assert.match(json.find((m) => m.name === `tiny-${arch}`)?.origin ?? '', /GGUF/);
    });
  }

  test('refused by name, nothing left behind: another architecture, no chat template, a truncated file, not a GGUF, a taken name', () => {
    const before = leftovers();
    const cases: [string, () => string, RegExp][] = [
      [
        'architecture',
        () => {
          const f = path.join(tmp, 'gpt2.gguf');
          writeGguf(f, '--arch', 'gpt2');
          return f;
        },
        /architecture 'gpt2' is not supported \(Toolsmith imports llama, qwen2, qwen3\)/,
      ],
      [
        'chat template',
        () => {
          const f = path.join(tmp, 'no-template.gguf');
          writeGguf(f, '--no-chat-template');
          return f;
        },
        /carries no chat template/,
      ],
      [
        'truncated',
        () => {
          const f = path.join(tmp, 'cut.gguf');
          const whole = fs.readFileSync(path.join(tmp, 'llama.gguf'));
          fs.writeFileSync(f, whole.subarray(0, Math.floor(whole.length * 0.6)));
          return f;
        },
        /is truncated/,
      ],
      [
        'not a GGUF',
        () => {
          const f = path.join(tmp, 'text.gguf');
          fs.writeFileSync(f, 'hello\n');
          return f;
        },
        /is not a GGUF file/,
      ],
    ];
    for (const [what, make, message] of cases) {
      const r = cli('import', '--gguf', make(), '--name', `bad-${what.replace(/ /g, '-')}`);
      assert.equal(r.code, 2, `${what}: ${r.all}`);
      assert.match(r.stderr, message, what);
      assert.deepEqual(leftovers(), before, `${what}: nothing left in the models folder`);
    }
    const missing = cli('import', '--gguf', path.join(tmp, 'nowhere.gguf'), '--name', 'x');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--gguf: .*nowhere\.gguf is not a file/);
    const taken = cli('import', '--gguf', path.join(tmp, 'llama.gguf'), '--name', 'tiny-llama');
    assert.equal(taken.code, 2);
    assert.match(taken.stderr, /a model named "tiny-llama" already exists/);
    const both = cli('import', path.join(tmp, 'llama.gguf'), '--gguf', path.join(tmp, 'llama.gguf'), '--name', 'y');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /beside --gguf/);
    assert.deepEqual(leftovers(), before);
  });
});
