/**
 * Tokenizers for engines that tokenise in-process. The embedded ONNX model is character-level: one token per
 * character (per Unicode code point) of a fixed vocabulary written by workers/trainer/export_onnx.py.
 */
import fs from 'node:fs';

export interface Tokenizer {
  encode(text: string): number[];
  decode(ids: number[]): string;
  readonly vocabSize: number;
  /** Generation ends when the model emits this id (not part of the returned text). */
  readonly eosId?: number;
}

export interface CharTokenizerSpec {
  type: 'char';
  /** Token id = index. Entries longer than one character (e.g. "<unk>", "<eos>") are special tokens. */
  vocab: string[];
  unk_id: number;
  eos_id?: number;
}

/**
 * Character tokenizer with added tokens. encode(): at each position the longest added token (a vocabulary entry of
 * more than one character other than <unk>/<eos>, e.g. `<|im_start|>` or `<tool_call>`) that matches is one token;
 * otherwise each code point maps to its id, and a character not in the vocabulary maps to `unk_id` (encode is lossy
 * for such characters; countTokens stays exact). Added tokens keep a char-level model's context short: the template's
 * tags are one token each, as they are in Qwen's tokenizer. decode(): added tokens give their text, <eos> gives the
 * empty string, <unk> gives U+FFFD so that lost characters stay visible.
 */
/**
 * The embedded model's vocabulary: <unk>, <eos>, newline, printable ASCII, then the template's tags as added tokens
 * (workers/rollout/template.ts). The trainer stores it in each checkpoint and export_onnx.py writes it to
 * tokenizer.json, so TypeScript owns it and Python never tokenises.
 */
export const EMBEDDED_VOCAB: string[] = [
  '<unk>',
  '<eos>',
  '\n',
  ...Array.from({ length: 95 }, (_, k) => String.fromCharCode(32 + k)),
  '<|im_start|>',
  '<|im_end|>',
  '<|endoftext|>',
  '<reason>',
  '</reason>',
  '<answer>',
  '</answer>',
  '<tool_call>',
  '</tool_call>',
  '<tool_response>',
  '</tool_response>',
  '\\boxed{',
  'system\n',
  'user\n',
  'assistant\n',
  '"arguments": ',
  '"code": ',
  '"input": ',
  '"name": ',
  'print(',
];

export const embeddedTokenizerSpec = (): CharTokenizerSpec => ({
  type: 'char',
  vocab: EMBEDDED_VOCAB,
  unk_id: 0,
  eos_id: 1,
});

export class CharTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosId?: number;
  readonly unkId: number;
  private readonly ids = new Map<string, number>();
  private readonly pieces: string[];

  constructor(spec: CharTokenizerSpec) {
    if (spec.type !== 'char' || !Array.isArray(spec.vocab))
      throw new Error('CharTokenizer: expected {"type":"char","vocab":[...]}');
    this.vocabSize = spec.vocab.length;
    this.unkId = spec.unk_id;
    this.eosId = spec.eos_id;
    const special = (i: number) => i === spec.unk_id || i === spec.eos_id;
    this.pieces = spec.vocab.map((p, i) => (i === spec.unk_id ? '\uFFFD' : special(i) ? '' : p));
    spec.vocab.forEach((p, i) => {
      if (special(i) || this.ids.has(p)) return;
      this.ids.set(p, i);
      if ([...p].length > 1) this.added.push(p);
    });
    this.added.sort((a, b) => b.length - a.length);
    for (const a of this.added) this.addedByFirst.set(a[0]!, [...(this.addedByFirst.get(a[0]!) ?? []), a]);
  }

  private readonly added: string[] = [];
  private readonly addedByFirst = new Map<string, string[]>();

  static fromFile(file: string): CharTokenizer {
    return new CharTokenizer(JSON.parse(fs.readFileSync(file, 'utf8')) as CharTokenizerSpec);
  }

  encode(text: string): number[] {
    const out: number[] = [];
    let i = 0;
    outer: while (i < text.length) {
      for (const a of this.addedByFirst.get(text[i]!) ?? []) {
        if (text.startsWith(a, i)) {
          out.push(this.ids.get(a)!);
          i += a.length;
          continue outer;
        }
      }
      const ch = String.fromCodePoint(text.codePointAt(i)!);
      out.push(this.ids.get(ch) ?? this.unkId);
      i += ch.length;
    }
    return out;
  }

  decode(ids: number[]): string {
    let s = '';
    for (const id of ids) s += this.pieces[id] ?? '\uFFFD';
    return s;
  }

  /** Same vocabulary (so KV caches and token ids carry over)? */
  sameAs(other: CharTokenizer): boolean {
    return (
      this.vocabSize === other.vocabSize &&
      this.unkId === other.unkId &&
      this.eosId === other.eosId &&
      this.pieces.every((p, i) => p === other.pieces[i])
    );
  }
}
