/**
 * Every number a mapped foreign trajectory carries, checked once for all formats (readers.ts and the ingest API pass
 * every mapper's output through it): a step or policy version is a non-negative safe integer (the store keeps it
 * in an integer column and the explorer pages by it: 1e300 gave a 500), a reward, advantage or time is finite,
 * token ids are non-negative integers. A trajectory that fails is a malformed record, reported, never stored. Pure.
 */
import type { ForeignTrajectory, Mapped } from '../../contracts/foreign.ts';

const wholeOk = (n: unknown) => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
const finiteOk = (n: unknown) => typeof n === 'number' && Number.isFinite(n);
// Float arrays keep NaN as "no value" (the export writes it as null); an infinity is a malformed value.
const floatOk = (n: unknown) => typeof n === 'number' && (Number.isFinite(n) || Number.isNaN(n));

const show = (n: unknown) => (typeof n === 'number' ? String(n) : JSON.stringify(n));

/** Why a trajectory's numbers are not storable, naming the field and value; undefined when all are. */
export function numberProblem(t: ForeignTrajectory): string | undefined {
  if (!wholeOk(t.step)) return `step ${show(t.step)} is not a non-negative whole number`;
  if (t.reward !== undefined && !finiteOk(t.reward)) return `reward ${show(t.reward)} is not a finite number`;
  if (t.advantage !== undefined && !finiteOk(t.advantage))
    return `advantage ${show(t.advantage)} is not a finite number`;
  for (const [k, v] of Object.entries(t.rewards ?? {}))
    if (!finiteOk(v)) return `rewards.${k} ${show(v)} is not a finite number`;
  for (const k of ['start', 'end'] as const) {
    const v = t.policy?.[k];
    if (v !== undefined && !wholeOk(v)) return `policy.${k} ${show(v)} is not a non-negative whole number`;
  }
  for (const [i, m] of t.messages.entries())
    if (m.time !== undefined && !finiteOk(m.time)) return `messages[${i}].time ${show(m.time)} is not a finite number`;
  const k = t.tokens;
  if (!k) return undefined;
  for (const key of ['promptIds', 'ids'] as const) {
    const bad = k[key]?.find((x) => !wholeOk(x));
    if (bad !== undefined) return `tokens.${key} holds ${show(bad)}, not a non-negative whole number`;
  }
  const badMask = k.mask?.find((x) => !finiteOk(x));
  if (badMask !== undefined) return `tokens.mask holds ${show(badMask)}, not a finite number`;
  for (const key of ['rolloutLogprobs', 'trainerLogprobs', 'entropies', 'advantages'] as const) {
    const bad = k[key]?.find((x) => !floatOk(x));
    if (bad !== undefined) return `tokens.${key} holds ${show(bad)}, not a finite number`;
  }
  return undefined;
}

/** A mapper's answer with its numbers checked: the first trajectory that fails makes the record a problem. */
export function checkedNumbers(m: Mapped): Mapped {
  if (!m.ok) return m;
  for (const t of m.trajectories) {
    const reason = numberProblem(t);
    if (reason) return { ok: false, problem: { file: t.source.file, line: t.source.line, reason } };
  }
  return m;
}
