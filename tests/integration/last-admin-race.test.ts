// @postgresql: also on PostgreSQL, where two transactions run side by side (on SQLite they take turns at the write lock).
/**
 * The last-admin check shares the transaction that demotes, disables or removes: the last
 * two admins taken away at once through server/auth/users.ts, one change held inside its transaction after its check
 * (the named hook adminChangeHooks.checked) until the other has started — on PostgreSQL, until the other waits for
 * the first's row locks. Exactly one goes through, the other is told why, and one admin stays active. With the check
 * outside the transaction both would pass it while the first is held, and both would go through.
 */
import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { adminChangeHooks, createUser, disableUser, listUsers, removeUser, setRole } from '../../server/auth/users.ts';
import { dialect, freshDatabase } from '../helpers/db.ts';
import { waitFor } from '../helpers/proc.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  delete adminChangeHooks.requested;
  delete adminChangeHooks.checked;
  await fresh.close();
});

/** Another connection of this database waits for a lock (the second change, queued behind the first's rows). */
async function someoneWaitsForALock(): Promise<boolean> {
  const rows = await db.query<{ n: number | bigint }>(
    `SELECT COUNT(*) AS "n" FROM pg_stat_activity WHERE "datname" = current_database() AND "wait_event_type" = 'Lock'`,
  );
  return Number(rows[0]!.n) > 0;
}

/** Runs `takeA` and `takeB` at once, the first to pass its check held there until the other has started. */
async function atOnce(takeA: () => Promise<unknown>, takeB: () => Promise<unknown>) {
  const requested = new Set<string>();
  const checked = new Set<string>();
  let held: string | undefined;
  adminChangeHooks.requested = (email) => void requested.add(email);
  adminChangeHooks.checked = async (email) => {
    checked.add(email);
    if (held) return; // the second past its check: only possible when the check is not in the transaction
    held = email;
    const other = email === 'a@lab.example' ? 'b@lab.example' : 'a@lab.example';
    await waitFor(`${other}'s change to start while ${email}'s is held`, async () =>
      checked.has(other) ? true : requested.has(other) && (dialect === 'sqlite' || (await someoneWaitsForALock())),
    );
  };
  const results = await Promise.allSettled([takeA(), takeB()]);
  assert.ok(held, 'a change passed its check');
  return results;
}

async function lastTwoAdmins() {
  await createUser(db, { email: 'a@lab.example', role: 'admin' });
  await createUser(db, { email: 'b@lab.example', role: 'admin' });
  await createUser(db, { email: 'ada@lab.example', role: 'researcher' });
}

async function assertOneWentThrough(results: PromiseSettledResult<unknown>[], what: RegExp) {
  const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  assert.equal(refused.length, 1, `exactly one refused: ${JSON.stringify(results.map((r) => r.status))}`);
  assert.match(String(refused[0]!.reason?.message), what);
  const admins = (await listUsers(db)).filter((u) => u.role === 'admin' && u.status === 'active');
  assert.equal(admins.length, 1, 'one admin stays active');
  // The refused one is the admin who stays: its change left nothing behind.
  assert.ok(String(refused[0]!.reason?.message).includes(` ${admins[0]!.email} is the only active admin`));
}

test('two concurrent demotions of the last two admins: exactly one goes through, the other is told why', async () => {
  await lastTwoAdmins();
  const results = await atOnce(
    () => setRole(db, 'a@lab.example', 'viewer'),
    () => setRole(db, 'b@lab.example', 'researcher'),
  );
  await assertOneWentThrough(results, /^role: [ab]@lab\.example is the only active admin; make another admin first/);
});

test('a disable and a removal of the last two admins at once: exactly one goes through', async () => {
  await lastTwoAdmins();
  const results = await atOnce(
    () => disableUser(db, 'a@lab.example'),
    () => removeUser(db, 'b@lab.example'),
  );
  await assertOneWentThrough(results, /^(disable|remove): [ab]@lab\.example is the only active admin/);
});

test('changes that leave an admin go through side by side; a disabled admin may be demoted', async () => {
  await lastTwoAdmins();
  await createUser(db, { email: 'c@lab.example', role: 'admin' });
  await Promise.all([setRole(db, 'a@lab.example', 'viewer'), setRole(db, 'ada@lab.example', 'viewer')]);
  await disableUser(db, 'b@lab.example');
  // b is no active admin any more, so c, the last one, does not stand in its way.
  assert.equal((await setRole(db, 'b@lab.example', 'viewer')).role, 'viewer');
  await assert.rejects(removeUser(db, 'c@lab.example'), /remove: c@lab\.example is the only active admin/);
  const left = (await listUsers(db)).map((u) => `${u.email} ${u.role} ${u.status}`);
  assert.deepEqual(left, [
    'a@lab.example viewer active',
    'b@lab.example viewer disabled',
    'ada@lab.example viewer active',
    'c@lab.example admin active',
  ]);
});
