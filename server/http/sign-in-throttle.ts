/**
 * The password sign-in throttle's decisions, pure: the stored record of each (account,
 * address) pair and the time in, allowed or the seconds to wait out. Storage: server/store/sign-in-throttle.ts.
 *
 * Growing delays, never a lock: a pair that failed `pairFree` times waits `firstDelayS`, then twice as long after each
 * further failure, up to `maxDelayS`; the account as a whole does the same after `accountFree` failures from all its
 * addresses, each address counting at most `perAddressToAccount` of its own. So one address, however many times it
 * guesses, slows only itself, while guessing from many addresses meets the account's delay. An address that signed in
 * to the account within `knownMs` is the owner's: the account's delay does not hold it back (its own still does).
 * A run of failures is forgotten `forgetMs` after its last one; a success clears its pair's.
 * tests/unit/sign-in-throttle.test.ts.
 */
export interface ThrottlePolicy {
  pairFree: number;
  accountFree: number;
  perAddressToAccount: number;
  firstDelayS: number;
  maxDelayS: number;
  forgetMs: number;
  knownMs: number;
}

export const THROTTLE_POLICY: ThrottlePolicy = {
  pairFree: 5,
  accountFree: 10,
  // As many as one address may fail freely: a second address is needed before the account's count matters.
  perAddressToAccount: 5,
  firstDelayS: 4,
  maxDelayS: 5 * 60,
  forgetMs: 60 * 60_000,
  knownMs: 30 * 24 * 3600_000,
};

/** The policy with the operator's first delay (TOOLSMITH_SIGN_IN_DELAY_S); the cap never below it. */
export const throttlePolicy = (firstDelayS: number): ThrottlePolicy => ({
  ...THROTTLE_POLICY,
  firstDelayS,
  maxDelayS: Math.max(THROTTLE_POLICY.maxDelayS, firstDelayS),
});

/** One (account, address) pair as stored; times in ms since the epoch. */
export interface PairRecord {
  address: string;
  failures: number;
  lastFailureAt: number | null;
  lastSuccessAt: number | null;
}

export type Decision = { ok: true } | { ok: false; retryAfterS: number; scope: 'address' | 'account' };

/** The pair's failures that still count at `now` (0 once the run is forgotten). */
export function liveFailures(p: PairRecord, now: number, policy: ThrottlePolicy = THROTTLE_POLICY): number {
  return p.lastFailureAt !== null && now - p.lastFailureAt < policy.forgetMs ? p.failures : 0;
}

/** Seconds to wait after the last of `failures`, `free` of them without any (0: no wait). */
export function delayS(failures: number, free: number, policy: ThrottlePolicy = THROTTLE_POLICY): number {
  if (failures < free) return 0;
  // 2^k overflows nothing here: the exponent is clamped well below where the cap already applies.
  return Math.min(policy.maxDelayS, policy.firstDelayS * 2 ** Math.min(failures - free, 30));
}

/** Whether a sign-in for the account of `pairs` (all its stored pairs) may be tried from `address` at `now`. */
export function decide(
  pairs: readonly PairRecord[],
  address: string,
  now: number,
  policy: ThrottlePolicy = THROTTLE_POLICY,
): Decision {
  const own = pairs.find((p) => p.address === address);
  const waitUntil = (failures: number, free: number, last: number | null) =>
    last === null ? 0 : last + delayS(failures, free, policy) * 1000;

  let until = 0;
  let scope: 'address' | 'account' = 'address';
  if (own) until = waitUntil(liveFailures(own, now, policy), policy.pairFree, own.lastFailureAt);

  const known = own?.lastSuccessAt != null && now - own.lastSuccessAt < policy.knownMs;
  if (!known) {
    let count = 0;
    let last: number | null = null;
    for (const p of pairs) {
      const n = liveFailures(p, now, policy);
      if (n === 0) continue;
      count += Math.min(n, policy.perAddressToAccount);
      last = Math.max(last ?? 0, p.lastFailureAt!);
    }
    const accountUntil = waitUntil(count, policy.accountFree, last);
    if (accountUntil > until) {
      until = accountUntil;
      scope = 'account';
    }
  }
  return now < until ? { ok: false, retryAfterS: Math.max(1, Math.ceil((until - now) / 1000)), scope } : { ok: true };
}

/**
 * The pair once an attempt is let through: counted as a failure before the password is checked, so that attempts
 * running at once each see the others; `settled` corrects it when the answer comes.
 */
export function charged(p: PairRecord | undefined, address: string, now: number, policy = THROTTLE_POLICY): PairRecord {
  const base = p ?? { address, failures: 0, lastFailureAt: null, lastSuccessAt: null };
  return { ...base, failures: liveFailures(base, now, policy) + 1, lastFailureAt: now };
}

/** How an attempt ended: a wrong password (or unknown email), the right one, or no password checked at all. */
export type Outcome = 'failure' | 'success' | 'not-checked';

export function settled(p: PairRecord, outcome: Outcome, now: number): PairRecord {
  switch (outcome) {
    // The delay runs from the answer, not from when the attempt started.
    case 'failure':
      return { ...p, lastFailureAt: now };
    case 'success':
      return { ...p, failures: 0, lastFailureAt: null, lastSuccessAt: now };
    case 'not-checked':
      return { ...p, failures: Math.max(0, p.failures - 1) };
  }
}

/** When the stored pair stops mattering and may be deleted. */
export function expiresAt(p: PairRecord, policy: ThrottlePolicy = THROTTLE_POLICY): number {
  return Math.max(
    p.lastFailureAt === null ? 0 : p.lastFailureAt + policy.forgetMs,
    p.lastSuccessAt === null ? 0 : p.lastSuccessAt + policy.knownMs,
  );
}
