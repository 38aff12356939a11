/**
 * Incremental detokenisation (pure), as vLLM does it: a byte-level BPE token can be part of a multi-byte character,
 * so decoding tokens one at a time garbles text. Each step decodes a short window of recent ids twice (without and
 * with the newest ones) and emits the difference once it no longer ends in U+FFFD (an incomplete character).
 */
import type { Tokenizer } from './tokenizer.ts';

export interface DetokState {
  prefixOffset: number;
  readOffset: number;
}

export const newDetok = (): DetokState => ({ prefixOffset: 0, readOffset: 0 });

/** New text for ids (all generated so far, EOS excluded); mutates `s`. `final` flushes an incomplete tail. */
export function detokStep(tok: Tokenizer, ids: number[], s: DetokState, final = false): string {
  const decode = (xs: number[]) => (xs.length ? tok.decode(xs) : '');
  const prefix = decode(ids.slice(s.prefixOffset, s.readOffset));
  const full = decode(ids.slice(s.prefixOffset));
  if (full.length > prefix.length && (final || !full.endsWith('\uFFFD'))) {
    s.prefixOffset = s.readOffset;
    s.readOffset = ids.length;
    return full.slice(prefix.length);
  }
  return '';
}
