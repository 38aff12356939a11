/**
 * The ingest API's rate limit per API token, through its HTTP edge (handleIngest, as the
 * routes under app/api/ingest/ call it) with real tokens on a real database: over the configured limit a token gets
 * 429 with Retry-After and a JSON error naming the limit, another token is unaffected, and once Retry-After has passed
 * the token is let in again. The limiter's clock is injected, so "waiting" is moving it, whatever the machine's load.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { IngestRateLimited } from '../../contracts/ingest.ts';
import { createToken } from '../../server/auth/tokens.ts';
import { createUser } from '../../server/auth/users.ts';
import { config } from '../../server/config.ts';
import type { Database } from '../../server/db/client.ts';
import { openIngestRun } from '../../server/imports/ingest.ts';
import { handleIngest } from '../../server/imports/ingest-http.ts';
import { createIngestLimiter, ingestRateOf } from '../../server/imports/ingest-rate.ts';
import { freshDatabase } from '../helpers/db.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
const tokens: Record<string, string> = {};
before(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  process.env.DATABASE_URL = fresh.url; // what handleIngest's getDb() opens
  for (const who of ['ada', 'bob']) {
    await createUser(db, { email: `${who}@lab.test`, role: 'researcher' });
    tokens[who] = (await createToken(db, { email: `${who}@lab.test`, name: 'ingest', scope: 'write' })).token;
  }
});
after(async () => {
  delete process.env.DATABASE_URL;
  await fresh?.close();
});

const openRun = (token: string, limiter: ReturnType<typeof createIngestLimiter>) =>
  handleIngest(
    new Request('http://localhost/api/ingest/runs', {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'pushed' }),
    }),
    'ingest.openRun',
    null,
    openIngestRun,
    limiter,
  );

test('over the limit: 429 with Retry-After naming the limit; another token unaffected; after Retry-After let in again', async () => {
  const rate = ingestRateOf(config({ TOOLSMITH_INGEST_RATE_PER_S: '2', TOOLSMITH_INGEST_RATE_BURST: '3' }));
  let now = 1_000_000;
  const limiter = createIngestLimiter(rate, () => now);
  for (let i = 0; i < 3; i++) assert.equal((await openRun(tokens.ada!, limiter)).status, 200, `call ${i + 1}`);
  const refused = await openRun(tokens.ada!, limiter);
  assert.equal(refused.status, 429);
  assert.equal(refused.headers.get('content-type'), 'application/json');
  // Three calls at once fill the window of 3 / 2 = 1.5 s: the first leaves it 2 s (rounded up) later.
  assert.equal(refused.headers.get('retry-after'), '2');
  const body = (await refused.json()) as IngestRateLimited;
  assert.deepEqual(body.error.limit, { name: 'ingest-rate', perSecond: 2, burst: 3, retryAfterS: 2 });
  assert.match(body.error.message, /TOOLSMITH_INGEST_RATE_PER_S/);
  assert.match(body.error.message, /this API token/);
  // A refused call is not stored or audited: three runs, three audit rows.
  assert.equal(await db.prisma.run.count(), 3);
  assert.equal(await db.prisma.auditLog.count({ where: { action: 'ingest.openRun' } }), 3);

  assert.equal((await openRun(tokens.bob!, limiter)).status, 200, "another token's budget is its own");

  now += 1000;
  assert.equal((await openRun(tokens.ada!, limiter)).status, 429, 'still full a second later');
  now += Number(refused.headers.get('retry-after')) * 1000 - 1000;
  assert.equal((await openRun(tokens.ada!, limiter)).status, 200, 'let in once Retry-After has passed');
});

test('the limit is configured next to the other settings; bad values are refused naming the variable', () => {
  assert.deepEqual(ingestRateOf(config({})), { perSecond: 10, burst: 100 });
  assert.throws(() => config({ TOOLSMITH_INGEST_RATE_PER_S: '0' }), /^Error: TOOLSMITH_INGEST_RATE_PER_S="0" is not/);
  assert.throws(() => config({ TOOLSMITH_INGEST_RATE_BURST: 'lots' }), /TOOLSMITH_INGEST_RATE_BURST="lots" is not/);
});
