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
 * Character tokenizer. encode(): each code point maps to its vocabulary id; a character not in the vocabulary
 * maps to `unk_id` (so encode is lossy for such characters, and countTokens stays exact). decode(): special
 * tokens (<unk>, <eos>, any entry longer than one character) decode to the empty string, except <unk>, which
 * decodes to U+FFFD so that lost characters stay visible.
 */
export class CharTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly eosId?: number;
  readonly unkId: number;
  private readonly ids = new Map<string, number>();
  private readonly pieces: string[];

  constructor(spec: CharTokenizerSpec) {
    if (spec.type !== 'char' || !Array.isArray(spec.vocab)) throw new Error('CharTokenizer: expected {"type":"char","vocab":[...]}');
    this.vocabSize = spec.vocab.length;
    this.unkId = spec.unk_id;
    this.eosId = spec.eos_id;
    this.pieces = spec.vocab.map((p, i) => (i === spec.unk_id ? '\uFFFD' : [...p].length === 1 ? p : ''));
    spec.vocab.forEach((p, i) => { if ([...p].length === 1 && !this.ids.has(p)) this.ids.set(p, i); });
  }

  static fromFile(file: string): CharTokenizer {
    return new CharTokenizer(JSON.parse(fs.readFileSync(file, 'utf8')) as CharTokenizerSpec);
  }

  encode(text: string): number[] {
    const out: number[] = [];
    for (const ch of text) out.push(this.ids.get(ch) ?? this.unkId);
    return out;
  }

  decode(ids: number[]): string {
    let s = '';
    for (const id of ids) s += this.pieces[id] ?? '\uFFFD';
    return s;
  }

  /** Same vocabulary (so KV caches and token ids carry over)? */
  sameAs(other: CharTokenizer): boolean {
    return this.vocabSize === other.vocabSize && this.unkId === other.unkId && this.eosId === other.eosId
      && this.pieces.every((p, i) => p === other.pieces[i]);
  }
}
