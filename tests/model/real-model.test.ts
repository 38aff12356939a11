// The real pretrained model everywhere the embedded one runs: SmolLM2-135M-Instruct (fetched by tests/helpers/
// real-model.ts). Its byte-level BPE tokenizer and chat template through the TypeScript tokenizer give Python's ids,
// decoded text and prompt; the embedded ONNX engine's greedy output equals transformers' generate() on the same
// weights; the trainer loads it, takes LoRA and full SFT steps that lower the loss on a demonstration, and its
// log-probs of a sampled response agree with the engine's.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { HfTokenizer, type ChatMessage } from '../../workers/engines/hf-tokenizer.ts';
import { OnnxEngine } from '../../workers/engines/onnx-engine.ts';
import { TrainerClient } from '../../workers/trainer/client.ts';
import { trainerPython } from '../../workers/trainer/python.ts';
import { realModel, realOnnx } from '../helpers/real-model.ts';
import { tokenizerCorpus } from '../helpers/tokenizer-corpus.ts';

const PY = trainerPython();
let modelDir = '';
let onnxDir = '';
let tok: HfTokenizer;
let engine: OnnxEngine | undefined;
before(async () => {
  modelDir = (await realModel()).dir;
  onnxDir = await realOnnx();
  tok = HfTokenizer.fromDir(modelDir);
});
after(async () => {
  await engine?.close();
});

/** Run Python with `code` (reading its JSON input from argv[1]); its last stdout line, parsed. */
function py<T>(code: string, input: unknown): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'real-model-'));
  fs.writeFileSync(path.join(dir, 'in.json'), JSON.stringify(input));
  try {
    const out = execFileSync(PY, ['-c', code, path.join(dir, 'in.json')], {
      encoding: 'utf8',
      env: { ...process.env, TRANSFORMERS_VERBOSITY: 'error' },
      maxBuffer: 64 << 20,
    });
    return JSON.parse(out.trim().split('\n').pop()!) as T;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

const CHATS: ChatMessage[][] = [
  [{ role: 'user', content: 'Natalia sold clips to 48 of her friends in April. How many clips did she sell?' }],
  [
    { role: 'system', content: 'Solve it with the Python tool.' },
    { role: 'user', content: 'What is 23 × 4? Résumé: ½ of 10 = 5. 日本語 🙂' },
    {
      role: 'assistant',
      content: '<tool_call>\n{"name": "python", "arguments": {"code": "print(23*4)"}}\n</tool_call>',
    },
    { role: 'user', content: '<tool_response>\n92\n</tool_response>' },
  ],
];

test("SmolLM2's BPE tokenizer and chat template in TypeScript give Python's ids, text and prompts", () => {
  const texts = tokenizerCorpus({ n: 400 });
  const ref = py<{ ids: number[][]; decoded: string[]; prompts: string[] }>(
    `import json, sys
from transformers import AutoTokenizer
t = AutoTokenizer.from_pretrained(${JSON.stringify(modelDir)})
inp = json.load(open(sys.argv[1]))
ids = [t(s, add_special_tokens=False).input_ids for s in inp["texts"]]
print(json.dumps({"ids": ids, "decoded": [t.decode(i) for i in ids],
  "prompts": [t.apply_chat_template(c, tokenize=False, add_generation_prompt=True) for c in inp["chats"]]}))`,
    { texts, chats: CHATS },
  );
  let same = 0;
  for (let i = 0; i < texts.length; i++) {
    const ids = tok.encode(texts[i]!);
    assert.deepEqual(ids, ref.ids[i], `ids of ${JSON.stringify(texts[i])}`);
    assert.equal(tok.decode(ids), ref.decoded[i]);
    same++;
  }
  assert.equal(same, 400);
  for (let i = 0; i < CHATS.length; i++)
    assert.equal(tok.renderChat(CHATS[i]!, { addGenerationPrompt: true }), ref.prompts[i], `chat ${i}`);
});

test("the ONNX engine's greedy decoding equals transformers' generate() on the same weights", async () => {
  engine = await OnnxEngine.load(onnxDir, { maxBatch: 16 });
  const prompts = CHATS.map((c) => tok.renderChat(c, { addGenerationPrompt: true }));
  const outs = await Promise.all(
    prompts.map((prompt) => engine!.generate({ prompt, maxTokens: 32, temperature: 0, topP: 1, stop: [] })),
  );
  const ref = py<number[][]>(
    `import json, sys, torch
from transformers import AutoModelForCausalLM
m = AutoModelForCausalLM.from_pretrained(${JSON.stringify(modelDir)}).eval()
res = []
for ids, n in json.load(open(sys.argv[1])):
    x = torch.tensor([ids])
    with torch.no_grad():
        # The attention mask explicitly: left to infer it, generate() would mask every <|im_end|> of the prompt,
        # since SmolLM2's pad token is <|im_end|>.
        out = m.generate(x, attention_mask=torch.ones_like(x), do_sample=False, max_new_tokens=n, eos_token_id=None, pad_token_id=2)
    res.append(out[0, x.shape[1]:].tolist())
print(json.dumps(res))`,
    prompts.map((p, i) => [tok.encode(p), outs[i]!.tokenIds.length]),
  );
  for (let i = 0; i < prompts.length; i++) {
    assert.ok(outs[i]!.tokenIds.length > 0);
    assert.deepEqual(outs[i]!.tokenIds, ref[i], `prompt ${i}: ${JSON.stringify(outs[i]!.text)}`);
  }
});

test("the trainer loads it, LoRA and full SFT steps lower the loss on a demonstration, and its log-probs match the engine's", async () => {
  const prompt = tok.renderChat(CHATS[0]!, { addGenerationPrompt: true });
  const response = 'She sold 48 clips.\n<answer>\\boxed{48}</answer><|im_end|>';
  const p = tok.encode(prompt);
  const r = tok.encode(response);
  const seq = [...p, ...r];
  const mask = [...p.map(() => 0), ...r.map(() => 1)];
  for (const lora of [{ rank: 8, alpha: 16 }, null]) {
    const t = await TrainerClient.start({ env: { ...process.env } });
    try {
      const info = await t.load({
        path: modelDir,
        fresh: true,
        lora,
        optim: { lr: lora ? 1e-3 : 1e-4, warmup_steps: 0 },
      });
      assert.equal(info.params > 130e6, true, `params ${info.params}`);
      if (lora)
        assert.ok(info.trainable_params < info.params / 50, `LoRA trains a small part: ${info.trainable_params}`);
      const losses: number[] = [];
      for (let i = 0; i < 4; i++) losses.push((await t.sftStep({ sequences: [seq], loss_masks: [mask] })).loss);
      assert.ok(
        losses[3]! < losses[0]!,
        `${lora ? 'LoRA' : 'full'} SFT lowers the loss: ${losses.map((x) => x.toFixed(3))}`,
      );
    } finally {
      await t.close();
    }
  }
  // The engine's log-probs of a sampled response against the trainer's on the same (untrained) weights.
  engine ??= await OnnxEngine.load(onnxDir, { maxBatch: 16 });
  const g = await engine.generate({ prompt, maxTokens: 24, temperature: 1, topP: 1, stop: [], seed: 3 });
  const t = await TrainerClient.start({ env: { ...process.env } });
  try {
    await t.load({ path: modelDir, fresh: true });
    const [lp] = await t.logprobs({ sequences: [[...p, ...g.tokenIds]], response_start: [p.length] });
    const diffs = g.tokenIds.map((_, i) => Math.abs(lp![i]! - g.logprobs![i]!));
    assert.ok(Math.max(...diffs) < 0.05, `engine vs trainer log-probs: max |Δ| ${Math.max(...diffs)}`);
  } finally {
    await t.close();
  }
});
