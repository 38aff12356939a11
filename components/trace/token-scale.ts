/**
 * The token view's logic, pure (tested in tests/unit/token-scale.test.ts): which text each token shows, the value of
 * the chosen quantity at a token, its colour, the legend and the hover text. components/trace/token-view.tsx only
 * renders what this computes.
 */
import type { ClipState, StoredTurn, TokenRecordWire } from '../../contracts/trajectory.ts';

/** The trace inspector's two views: turns (the replay) and tokens. */
export type TraceMode = 'turns' | 'tokens';

/** The `view` query parameter as a mode (the page reads it on the server, the shared view after mounting). */
export const parseMode = (v: string | null | undefined): TraceMode => (v === 'tokens' ? 'tokens' : 'turns');

export type TokenQuantity = 'rollout' | 'trainer' | 'diff' | 'entropy' | 'advclip';

export const QUANTITIES: { key: TokenQuantity; label: string; help: string }[] = [
  {
    key: 'rollout',
    label: 'rollout logprob',
    help: 'log π_rollout of the sampled token, from the engine: red = unlikely',
  },
  {
    key: 'trainer',
    label: 'trainer logprob',
    help: 'log π_old of the token under the trainer before the update: red = unlikely',
  },
  {
    key: 'diff',
    label: 'trainer − rollout',
    help: 'log π_old − log π_rollout (the log importance ratio TIS corrects): blue = trainer higher, red = engine higher',
  },
  {
    key: 'entropy',
    label: 'entropy',
    help: 'entropy of the engine’s distribution at the token (nats): brighter = more uncertain',
  },
  {
    key: 'advclip',
    label: 'advantage × clip',
    help: 'the sequence’s advantage (green +, red −) and what the update did with the token: clipped low/high/dual, truncated or masked by TIS',
  },
];

export const CLIP_LABEL: Record<ClipState, string> = {
  0: 'not clipped',
  1: 'clipped low (Â < 0, ρ < 1−ε_low)',
  2: 'clipped high (Â > 0, ρ > 1+ε_high)',
  3: 'dual-clipped',
  4: 'truncated by TIS (weight capped)',
  5: 'masked by TIS (weight 0)',
};

// ───────── text of each token ─────────

/** A run of tokens shown as one piece of text: a model token, or a whole tool response (greyed, masked). */
export interface TokenPiece {
  /** Index of the first token in the record. */
  i: number;
  /** Tokens in the piece (1 for a model token; the whole response for a tool piece). */
  n: number;
  text: string;
  kind: 'model' | 'tool' | 'untokenised';
}

/**
 * One turn's pieces: its model tokens, each with the next `chars[i]` characters of the turn's text, then its appended
 * tool response as one masked piece. Text the shares do not cover (a record that disagrees with the text) is kept as
 * an 'untokenised' piece, so nothing of the turn is hidden.
 */
export function turnPieces(
  turn: Pick<StoredTurn, 'index' | 'text' | 'tool'>,
  rec: TokenRecordWire,
  idx: number[],
): TokenPiece[] {
  const out: TokenPiece[] = [];
  let at = 0;
  const tool: number[] = [];
  // A record without text spans (a run imported from elsewhere: no tokenizer here) shows each token by its id.
  const spans = idx.some((i) => (rec.chars[i] ?? 0) > 0);
  for (const i of idx) {
    if (rec.mask[i] === 0) {
      tool.push(i);
      continue;
    }
    const n = rec.chars[i] ?? 0;
    out.push({ i, n: 1, text: spans ? turn.text.slice(at, at + n) : `⟨${rec.ids[i]}⟩`, kind: 'model' });
    at += n;
  }
  if (at < turn.text.length) out.push({ i: -1, n: 0, text: turn.text.slice(at), kind: 'untokenised' });
  // Tool tokens are masked as a whole: one greyed piece with the appended text (their shares cover all of it).
  if (tool.length) out.push({ i: tool[0]!, n: tool.length, text: turn.tool?.appendedText ?? '', kind: 'tool' });
  return out;
}

/** Token indices of each turn, in record order (one pass over the record). */
export function tokensByTurn(rec: TokenRecordWire): Map<number, number[]> {
  const m = new Map<number, number[]>();
  for (let i = 0; i < rec.turn.length; i++) {
    const t = rec.turn[i]!;
    let a = m.get(t);
    if (!a) m.set(t, (a = []));
    a.push(i);
  }
  return m;
}

// ───────── values and colours ─────────

const finite = (x: number | null | undefined): x is number => typeof x === 'number' && Number.isFinite(x);

/** The quantity at model token i; null where it has no value (no logprob reported, not trained on). */
export function tokenValue(rec: TokenRecordWire, i: number, q: TokenQuantity): number | null {
  if (rec.mask[i] === 0) return null;
  switch (q) {
    case 'rollout':
      return rec.rolloutLogprobs[i] ?? null;
    case 'trainer':
      return rec.trainerLogprobs?.[i] ?? null;
    case 'diff': {
      const a = rec.trainerLogprobs?.[i],
        b = rec.rolloutLogprobs[i];
      return finite(a) && finite(b) ? a - b : null;
    }
    case 'entropy':
      return rec.entropy[i] ?? null;
    case 'advclip':
      return rec.clip ? rec.advantage : null;
  }
}

/** What the colours are relative to: the largest |value| over the record's model tokens (diff, entropy). */
export function scaleOf(rec: TokenRecordWire, q: TokenQuantity): number {
  if (q !== 'diff' && q !== 'entropy') return 1;
  let m = 0;
  for (let i = 0; i < rec.ids.length; i++) {
    const v = tokenValue(rec, i, q);
    if (finite(v)) m = Math.max(m, Math.abs(v));
  }
  // A floor keeps near-zero noise from being painted at full strength.
  return Math.max(m, q === 'diff' ? 1e-3 : 1e-2);
}

export interface TokenStyle {
  background?: string;
  textDecoration?: string;
  outline?: string;
  color?: string;
}

const rgba = (rgb: string, a: number) => `rgba(${rgb}, ${Math.round(Math.min(1, Math.max(0, a)) * 100) / 100})`;
const RED = '239, 68, 68',
  BLUE = '59, 130, 246',
  GREEN = '34, 197, 94',
  ORANGE = '249, 115, 22';
const CLIP_BG: Record<Exclude<ClipState, 0>, string> = {
  1: '168, 85, 247',
  2: '236, 72, 153',
  3: '217, 70, 239',
  4: '234, 179, 8',
  5: '107, 114, 128',
};

/** The style of model token i for quantity q (scale: scaleOf). No style: no value. */
export function tokenStyle(rec: TokenRecordWire, i: number, q: TokenQuantity, scale: number): TokenStyle {
  const v = tokenValue(rec, i, q);
  if (q === 'advclip') {
    if (!rec.clip) return {};
    const c = rec.clip[i] ?? 0;
    if (c === 5) return { background: rgba(CLIP_BG[5], 0.6), textDecoration: 'line-through' };
    if (c === 4) return { background: rgba(CLIP_BG[4], 0.55), textDecoration: 'underline dotted' };
    if (c !== 0) return { background: rgba(CLIP_BG[c], 0.6) };
    if (!finite(v)) return {};
    return { background: rgba(v >= 0 ? GREEN : RED, 0.15 + 0.45 * Math.min(1, Math.abs(v))) };
  }
  if (!finite(v)) {
    // −∞ (a token the distribution gave no mass) is as unlikely as it gets.
    if ((q === 'rollout' || q === 'trainer') && v === -Infinity) return { background: rgba(RED, 0.85) };
    return {};
  }
  switch (q) {
    case 'rollout':
    case 'trainer':
      return { background: rgba(RED, 0.85 * (1 - Math.exp(Math.min(0, v)))) };
    case 'diff':
      return { background: rgba(v >= 0 ? BLUE : RED, 0.85 * Math.min(1, Math.abs(v) / scale)) };
    case 'entropy':
      return { background: rgba(ORANGE, 0.85 * Math.min(1, v / scale)) };
  }
}

/** The legend of quantity q: colour swatches and what they mean, plus why nothing is coloured when that is so. */
export function legendOf(
  rec: TokenRecordWire,
  q: TokenQuantity,
  scale: number,
): { note: string | null; items: { label: string; background: string; textDecoration?: string }[] } {
  const fmt = (x: number) => (Math.abs(x) >= 0.01 ? x.toFixed(2) : x.toExponential(1));
  const any = rec.ids.some((_, i) => tokenValue(rec, i, q) !== null);
  const note = any
    ? null
    : q === 'trainer' || q === 'diff' || q === 'advclip'
      ? 'Not trained on: this trajectory has no trainer values (evaluation, or dropped by RoC).'
      : 'The engine reported no values for this quantity.';
  switch (q) {
    case 'rollout':
    case 'trainer':
      return {
        note,
        items: [
          { label: 'p ≈ 1', background: rgba(RED, 0) },
          { label: 'p = 0.5', background: rgba(RED, 0.425) },
          { label: 'p → 0', background: rgba(RED, 0.85) },
        ],
      };
    case 'diff':
      return {
        note,
        items: [
          { label: `engine higher (−${fmt(scale)})`, background: rgba(RED, 0.85) },
          { label: '0', background: rgba(RED, 0) },
          { label: `trainer higher (+${fmt(scale)})`, background: rgba(BLUE, 0.85) },
        ],
      };
    case 'entropy':
      return {
        note,
        items: [
          { label: '0 nats', background: rgba(ORANGE, 0) },
          { label: `${fmt(scale)} nats`, background: rgba(ORANGE, 0.85) },
        ],
      };
    case 'advclip':
      return {
        note,
        items: [
          {
            label: `advantage ${rec.advantage !== null && rec.advantage >= 0 ? '+' : ''}${rec.advantage === null ? '—' : fmt(rec.advantage)}`,
            background: rgba(rec.advantage !== null && rec.advantage < 0 ? RED : GREEN, 0.5),
          },
          ...([1, 2, 3, 4, 5] as const).map((c) => ({
            label: CLIP_LABEL[c],
            background: rgba(CLIP_BG[c], c === 4 ? 0.55 : 0.6),
            textDecoration: c === 5 ? 'line-through' : c === 4 ? 'underline dotted' : undefined,
          })),
        ],
      };
  }
}

// ───────── hover text ─────────

const num = (x: number | null | undefined, d = 4) =>
  x === null || x === undefined ? '—' : Number.isFinite(x) ? x.toFixed(d) : String(x);

/** Everything the record knows about token i (the tooltip and the hover read-out). */
export function tokenTitle(rec: TokenRecordWire, i: number, text: string): string {
  if (rec.mask[i] === 0)
    return `tool response, turn ${rec.turn[i]! + 1}: masked out of the loss (not generated by the model)`;
  const parts = [`token ${i} · id ${rec.ids[i]} · turn ${rec.turn[i]! + 1} · ${JSON.stringify(text)}`];
  const lp = rec.rolloutLogprobs[i];
  parts.push(`rollout logprob ${num(lp)}${finite(lp) ? ` (p ${Math.exp(lp).toFixed(3)})` : ''}`);
  if (rec.trainerLogprobs) {
    const d = tokenValue(rec, i, 'diff');
    parts.push(`trainer logprob ${num(rec.trainerLogprobs[i])}`, `trainer − rollout ${num(d)}`);
  }
  parts.push(`entropy ${num(rec.entropy[i], 3)}`);
  if (rec.clip)
    parts.push(
      `advantage ${num(rec.advantage, 3)}`,
      `TIS weight ${num(rec.weights?.[i], 3)}`,
      CLIP_LABEL[rec.clip[i] ?? 0],
    );
  else parts.push('not trained on');
  return parts.join(' · ');
}
