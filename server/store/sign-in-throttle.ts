/**
 * The sign-in throttle's records (SignInThrottle: one row per account and address bucket) and the two steps of an
 * attempt: `claimAttempt` decides with server/http/sign-in-throttle.ts and, when allowed, counts the attempt before
 * the password is checked; `settleAttempt` records how it ended. Both read and write one account's rows in one
 * transaction that attempts on the same account take in turn (SQLite: the write lock; PostgreSQL: an advisory lock
 * on the account), so attempts at once, on one web server or several, cannot all pass a check made before any of
 * them was counted. Expired rows are deleted on write (`pruneAttempts`).
 */
import { inTransaction } from '../db/batch.ts';
import type { Database, Tx } from '../db/client.ts';
import {
  charged,
  decide,
  expiresAt,
  settled,
  THROTTLE_POLICY,
  type Decision,
  type Outcome,
  type PairRecord,
  type ThrottlePolicy,
} from '../http/sign-in-throttle.ts';

// The advisory lock's first key: this table's, so it never meets the migration runner's or another feature's lock.
const LOCK_CLASS = 4401;

const ms = (d: Date | null) => (d === null ? null : d.getTime());
const date = (t: number | null) => (t === null ? null : new Date(t));
const toRecord = (r: {
  address: string;
  failures: number;
  lastFailureAt: Date | null;
  lastSuccessAt: Date | null;
}) => ({
  address: r.address,
  failures: r.failures,
  lastFailureAt: ms(r.lastFailureAt),
  lastSuccessAt: ms(r.lastSuccessAt),
});

async function lockedPairs(db: Database, tx: Tx, account: string): Promise<PairRecord[]> {
  if (db.dialect === 'postgresql')
    await db.query(`SELECT 1 AS "locked" FROM pg_advisory_xact_lock(${LOCK_CLASS}, hashtext(?))`, [account], tx);
  return (await tx.signInThrottle.findMany({ where: { account } })).map(toRecord);
}

async function save(tx: Tx, account: string, p: PairRecord, policy: ThrottlePolicy) {
  const data = {
    failures: p.failures,
    lastFailureAt: date(p.lastFailureAt),
    lastSuccessAt: date(p.lastSuccessAt),
    expiresAt: new Date(expiresAt(p, policy)),
  };
  await tx.signInThrottle.upsert({
    where: { account_address: { account, address: p.address } },
    create: { account, address: p.address, ...data },
    update: data,
  });
}

/** Decide on an attempt for `account` from `address` at `now`; an allowed one is counted as a failure until settled. */
export function claimAttempt(
  db: Database,
  account: string,
  address: string,
  now: number,
  policy: ThrottlePolicy = THROTTLE_POLICY,
): Promise<Decision> {
  return inTransaction(db, async (tx) => {
    const pairs = await lockedPairs(db, tx, account);
    const d = decide(pairs, address, now, policy);
    if (d.ok)
      await save(
        tx,
        account,
        charged(
          pairs.find((p) => p.address === address),
          address,
          now,
          policy,
        ),
        policy,
      );
    return d;
  });
}

/** Record how a claimed attempt ended. */
export function settleAttempt(
  db: Database,
  account: string,
  address: string,
  outcome: Outcome,
  now: number,
  policy: ThrottlePolicy = THROTTLE_POLICY,
): Promise<void> {
  return inTransaction(db, async (tx) => {
    const own = (await lockedPairs(db, tx, account)).find((p) => p.address === address);
    // Gone only if pruned in between, which takes longer than any attempt: then there is nothing to correct.
    if (own) await save(tx, account, settled(own, outcome, now), policy);
  });
}

/** Delete the rows that no longer matter at `now`; how many. */
export async function pruneAttempts(db: Database, now: number): Promise<number> {
  return (await db.prisma.signInThrottle.deleteMany({ where: { expiresAt: { lt: new Date(now) } } })).count;
}

/** The stored pairs of an account (tests, and whoever looks into a complaint). */
export async function attemptsOf(db: Database, account: string): Promise<PairRecord[]> {
  return (await db.prisma.signInThrottle.findMany({ where: { account }, orderBy: { address: 'asc' } })).map(toRecord);
}

/** What the sign-in edge (server/http/auth-edge.ts) counts attempts with. */
export interface SignInAttempts {
  claim(account: string, address: string): Promise<Decision>;
  settle(account: string, address: string, outcome: Outcome): Promise<void>;
}

/**
 * Attempts kept in `getDb()`'s database; expired rows deleted on a claim at most once per `pruneEveryMs` per process
 * (one indexed DELETE, outside the attempt's transaction so it never waits on an account's lock).
 */
export function storedAttempts(
  getDb: () => Promise<Database>,
  opts: { now?: () => number; policy?: ThrottlePolicy; pruneEveryMs?: number } = {},
): SignInAttempts {
  const now = opts.now ?? Date.now;
  const policy = opts.policy ?? THROTTLE_POLICY;
  const every = opts.pruneEveryMs ?? 60_000;
  let prunedAt = Number.NEGATIVE_INFINITY;
  return {
    claim: async (account, address) => {
      const db = await getDb();
      const t = now();
      if (t - prunedAt >= every) {
        prunedAt = t;
        await pruneAttempts(db, t);
      }
      return claimAttempt(db, account, address, t, policy);
    },
    settle: async (account, address, outcome) => settleAttempt(await getDb(), account, address, outcome, now(), policy),
  };
}
