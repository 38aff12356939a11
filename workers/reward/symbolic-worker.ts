/**
 * Runs inside a worker_thread: symbolic equivalence with @cortex-js/compute-engine, then numeric sampling for
 * expressions with variables. The pool terminates this thread when a check runs past its limit.
 */
import { parentPort } from 'node:worker_threads';
import { ComputeEngine } from '@cortex-js/compute-engine';

/** `ratio`: is a / b one non-zero constant (two equations' sides moved to one side, equal up to scaling)? */
export interface SymTask {
  id: number;
  a: string;
  b: string;
  negate?: boolean;
  ratio?: boolean;
  spin?: boolean;
}
/** `final`: two constants evaluated to different values, a verdict Math-Verify could not overturn. */
export interface SymReply {
  id: number;
  equal: boolean | null;
  method: 'symbolic' | 'sampling';
  reason: string;
  final?: boolean;
}

const ce = new ComputeEngine();
const close = (x: number, y: number) =>
  x === y || Math.abs(x - y) <= Math.max(1e-9, 1e-8 * Math.max(Math.abs(x), Math.abs(y)));

function value(e: any): { re: number; im: number } | null {
  const n = e.N();
  const re = n.re,
    im = n.im ?? 0;
  if (typeof re !== 'number' || Number.isNaN(re) || Number.isNaN(im)) return null;
  return { re, im };
}

function check(t: SymTask): Omit<SymReply, 'id'> {
  if (t.spin)
    for (;;) {
      /* test hook: a check that never ends */
    }
  const a = ce.parse(t.a);
  const b0 = ce.parse(t.b);
  if (!a.isValid || !b0.isValid)
    return { equal: null, method: 'symbolic', reason: 'compute-engine could not parse it' };
  const b = t.negate ? ce.box(['Negate', b0]) : b0;
  const vars = [...new Set([...(a.unknowns ?? []), ...(b.unknowns ?? [])])];
  if (t.ratio) return proportional(a, b, vars);
  if (vars.length === 0) {
    const va = value(a),
      vb = value(b);
    if (va && vb) {
      if (!Number.isFinite(va.re) || !Number.isFinite(vb.re)) {
        // A true infinity compares by sign; an overflow (no \infty written) proves nothing.
        if (t.a.includes('\\infty') && t.b.includes('\\infty'))
          return { equal: va.re === vb.re, method: 'symbolic', reason: 'evaluated (infinite)' };
        if (!(t.a.includes('\\infty') || t.b.includes('\\infty')))
          return { equal: null, method: 'symbolic', reason: 'overflows double precision' };
        return { equal: false, method: 'symbolic', reason: 'infinite vs finite' };
      }
      // Integers compare exactly; past 2^53 a double cannot tell n from n+1, so an exact step must decide.
      if (va.im === 0 && vb.im === 0 && Number.isInteger(va.re) && Number.isInteger(vb.re)) {
        if (Math.max(Math.abs(va.re), Math.abs(vb.re)) > Number.MAX_SAFE_INTEGER)
          return { equal: null, method: 'symbolic', reason: 'integers beyond double precision: left to an exact step' };
        return {
          equal: va.re === vb.re,
          method: 'symbolic',
          reason: `evaluated to integers: ${va.re} vs ${vb.re}`,
          final: true,
        };
      }
      return {
        equal: close(va.re, vb.re) && close(va.im, vb.im),
        method: 'symbolic',
        reason: `evaluated: ${va.re} vs ${vb.re}`,
        final: true,
      };
    }
  }
  let eq: boolean | undefined;
  try {
    eq = a.isEqual(b);
  } catch {
    eq = undefined;
  }
  if (eq === true) return { equal: true, method: 'symbolic', reason: 'compute-engine: equal' };
  if (vars.length === 0)
    return {
      equal: eq === false ? false : null,
      method: 'symbolic',
      reason: `compute-engine: ${eq === false ? 'not equal' : 'undecided'}`,
    };
  // numeric sampling at pseudo-random points (deterministic seed)
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  let agree = 0;
  for (let k = 0; k < 12 && agree < 6; k++) {
    const subs: Record<string, number> = {};
    for (const v of vars) subs[v] = Math.round((0.3 + 2.4 * rnd()) * 1000) / 1000;
    let va, vb;
    try {
      va = value(a.subs(subs));
      vb = value(b.subs(subs));
    } catch {
      continue;
    }
    if (!va || !vb || !Number.isFinite(va.re) || !Number.isFinite(vb.re)) continue;
    if (!close(va.re, vb.re) || !close(va.im, vb.im))
      return { equal: false, method: 'sampling', reason: `differ at ${JSON.stringify(subs)}: ${va.re} vs ${vb.re}` };
    agree++;
  }
  if (agree >= 3) return { equal: true, method: 'sampling', reason: `agree at ${agree} random points` };
  return { equal: null, method: 'sampling', reason: 'too few points where both evaluate' };
}

/** Sampling: a / b at random points is one finite non-zero constant. */
function proportional(a: any, b: any, vars: string[]): Omit<SymReply, 'id'> {
  let seed = 54321;
  const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  let k: number | null = null,
    agree = 0;
  for (let i = 0; i < 12 && agree < 6; i++) {
    const subs: Record<string, number> = {};
    for (const v of vars) subs[v] = Math.round((0.3 + 2.4 * rnd()) * 1000) / 1000;
    let va, vb;
    try {
      va = value(a.subs(subs));
      vb = value(b.subs(subs));
    } catch {
      continue;
    }
    if (!va || !vb || va.im !== 0 || vb.im !== 0 || !Number.isFinite(va.re) || !Number.isFinite(vb.re) || vb.re === 0)
      continue;
    const q = va.re / vb.re;
    if (q === 0) return { equal: false, method: 'sampling', reason: 'not proportional (zero ratio)' };
    if (k === null) k = q;
    else if (!close(k, q))
      return { equal: false, method: 'sampling', reason: `not proportional: ratio ${k} then ${q}` };
    agree++;
  }
  if (agree >= 3 && vars.length > 0)
    return { equal: true, method: 'sampling', reason: `equal up to scaling (ratio ${k} at ${agree} points)` };
  return { equal: null, method: 'sampling', reason: 'too few points to compare up to scaling' };
}

parentPort!.on('message', (t: SymTask) => {
  let r: Omit<SymReply, 'id'>;
  try {
    r = check(t);
  } catch (e) {
    r = { equal: null, method: 'symbolic', reason: `compute-engine error: ${(e as Error).message}` };
  }
  parentPort!.postMessage({ id: t.id, ...r });
});
parentPort!.postMessage({ ready: true });
