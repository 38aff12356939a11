// Live streams: runs.events opens only for a run that exists (NOT_FOUND before any event and
// before the stream counts), at most TOOLSMITH_MAX_STREAMS_PER_USER per user at once (TOO_MANY_REQUESTS past
// it, with a clear message), and a stream that ends or is aborted frees its place. Share views poll
// share.view.events (a query, no stream); a run link whose run is gone answers NOT_FOUND.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { TRPCError } from '@trpc/server';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { principal } from '../helpers/principals.ts';
import { appendEvent } from '../../server/store/events.ts';
import { createRun } from '../../server/store/runs.ts';
import { createShareLink } from '../../server/share/links.ts';
import { openStreams } from '../../server/trpc/stream-limits.ts';
import { waitFor } from '../helpers/proc.ts';

process.env.TOOLSMITH_POLL_MS ??= '20';
process.env.TOOLSMITH_MAX_STREAMS_PER_USER = '3';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let runId: string;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  runId = (await createRun(db, { name: 'live', kind: 'train' })).id;
  await appendEvent(db, runId, { message: 'first' });
});
afterEach(async () => {
  await fresh.close();
});

const alice = principal('viewer', 'u_alice');
const bob = principal('viewer', 'u_bob');

/** Open runs.events as `who` and read its first event; returns the abort and the drain. */
async function open(who: typeof alice, id = runId) {
  const ac = new AbortController();
  const it = (
    await createCallerFactory(appRouter)({ db, principal: who }, { signal: ac.signal }).runs.events({ runId: id })
  )[Symbol.asyncIterator]();
  const first = await it.next();
  const drained = (async () => {
    while (!(await it.next()).done) {
      /* polls */
    }
  })();
  return {
    first,
    abort: async () => {
      ac.abort();
      await drained.catch(() => {});
    },
  };
}

/**
 * An aborted stream frees its place as its generator ends: the count is read until it has come down to `left` (at
 * once when it already has), however long a busy machine takes; one that goes below it, or stays above it, fails.
 */
function freed(key: string, left: number) {
  return waitFor(`${key}'s streams to come down to ${left}`, () => openStreams(key) === left, {
    intervalMs: 10,
    detail: () => `open: ${openStreams(key)}`,
  });
}

function code(expected: string, message?: RegExp) {
  return (e: unknown) => {
    assert.ok(e instanceof TRPCError, String(e));
    assert.equal(e.code, expected);
    if (message) assert.match(e.message, message);
    return true;
  };
}

test('an unknown run answers NOT_FOUND before any event, and does not count as a stream', async () => {
  await assert.rejects(open(alice, 'run_nope'), code('NOT_FOUND', /run run_nope not found/));
  assert.equal(openStreams('user:u_alice'), 0);
});

test('no principal: 401 before streaming', async () => {
  await assert.rejects(
    (async () => {
      const it = (await createCallerFactory(appRouter)({ db, principal: null }).runs.events({ runId }))[
        Symbol.asyncIterator
      ]();
      await it.next();
    })(),
    code('UNAUTHORIZED'),
  );
});

test('at most TOOLSMITH_MAX_STREAMS_PER_USER per user; another user is counted apart; an aborted stream frees its place', async () => {
  const streams = [await open(alice), await open(alice), await open(alice)];
  try {
    for (const s of streams)
      assert.equal((s.first.value as unknown as [string, { message: string }])[1].message, 'first');
    assert.equal(openStreams('user:u_alice'), 3);
    await assert.rejects(
      open(alice),
      code(
        'TOO_MANY_REQUESTS',
        /too many live streams open: 3 of at most 3 per user \(TOOLSMITH_MAX_STREAMS_PER_USER\)/,
      ),
    );
    assert.equal(openStreams('user:u_alice'), 3, 'a refused stream must not count');

    const b = await open(bob);
    assert.equal(openStreams('user:u_bob'), 1);
    await b.abort();
    await freed('user:u_bob', 0);

    await streams.pop()!.abort();
    await freed('user:u_alice', 2);
    streams.push(await open(alice)); // the freed place can be taken again
    assert.equal(openStreams('user:u_alice'), 3);
  } finally {
    for (const s of streams) await s.abort();
  }
  await freed('user:u_alice', 0);
});

test('share.view.events: a run link whose run is gone answers NOT_FOUND like a dead link', async () => {
  const { token } = await createShareLink(db, { scope: 'run', target: { runId } });
  const anon = createCallerFactory(appRouter)({ db, principal: null });
  assert.equal((await anon.share.view.events({ token })).events[0]?.message, 'first');
  await db.prisma.runEvent.deleteMany({ where: { runId } });
  await db.prisma.run.delete({ where: { id: runId } });
  await assert.rejects(anon.share.view.events({ token }), code('NOT_FOUND', /share link not found/));
});
