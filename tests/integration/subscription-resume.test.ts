// @postgresql: also on PostgreSQL, because a stream resumes after an event id, whose order comes from each database's own sequence.
// runs.events over real HTTP: the real appRouter behind @trpc/server's standalone adapter, consumed by the real
// tRPC client (httpSubscriptionLink + the `eventsource` package), while a writer appends to the run. The
// connection is cut mid-stream; the client must reconnect by itself, resume from the last event it saw
// (lastEventId), and end up with seqs 1..N exactly once each, in order.
// What is asserted is the mechanism, not how many tries it took: on a loaded machine a reconnect can go unanswered
// long enough that the client tries again with the same lastEventId, which is correct. Every request after the
// first must carry the newest id the client had at that moment (never an older one), and the client ends connected.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createTRPCClient, httpSubscriptionLink } from '@trpc/client';
import { createHTTPServer } from '@trpc/server/adapters/standalone';
import { EventSource } from 'eventsource';
import { appRouter, type AppRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { TEST_ADMIN } from '../helpers/principals.ts';
import { appendEvents } from '../../server/store/events.ts';
import { createRun } from '../../server/store/runs.ts';
import type { Database } from '../../server/db/client.ts';
import { dialect, freshDatabase } from '../helpers/db.ts';

// The server polls the database at min(TOOLSMITH_POLL_MS, 250) ms; keep the test's waits short.
process.env.TOOLSMITH_POLL_MS ??= '50';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `cond` until it holds; fail with `what` (and the current state) after `ms`. */
async function until(cond: () => boolean, ms: number, what: () => string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
    await sleep(10);
  }
}

interface SeenRequest {
  url: string;
  lastEventId: string | null;
  at: number;
  /** The writer's last seq when the request arrived. */
  writtenSoFar: number;
  /** The last seq the client had received when the request arrived (null: none yet). */
  clientLast: number | null;
  /** The writer's last seq when the request was let through to the router (after a hold, if any). */
  writtenAtAnswer?: number;
}

/** What the test knows when a request arrives: the writer's last seq and the client's last seq. */
interface Probe {
  written(): number;
  clientLast(): number | null;
}

/**
 * The app router on 127.0.0.1 (port 0 = any free port, or a given one for a restart), recording each request.
 * `hold()` keeps new requests of runs.events unanswered until its release is called: a server slow to answer, on
 * demand (a fault injector: the test decides how much is written before the client gets its answer).
 */
async function serve(db: Database, seen: SeenRequest[], probe: Probe, port = 0) {
  const server = createHTTPServer({ router: appRouter, createContext: () => ({ db, principal: TEST_ADMIN }) });
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  let gate: Promise<void> = Promise.resolve();
  const router = server.listeners('request') as ((req: http.IncomingMessage, res: http.ServerResponse) => void)[];
  server.removeAllListeners('request');
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!req.url?.startsWith('/runs.events')) {
      for (const l of router) l.call(server, req, res);
      return;
    }
    const header = req.headers['last-event-id'];
    const entry: SeenRequest = {
      url: req.url,
      lastEventId: (Array.isArray(header) ? header[0] : header) ?? inputOf(req.url).lastEventId ?? null,
      at: Date.now(),
      writtenSoFar: probe.written(),
      clientLast: probe.clientLast(),
    };
    seen.push(entry);
    void gate.then(() => {
      entry.writtenAtAnswer = probe.written();
      for (const l of router) l.call(server, req, res);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    server,
    port: (server.address() as AddressInfo).port,
    /** Hold new runs.events requests unanswered; returns the release. */
    hold(): () => void {
      let release = () => {};
      gate = new Promise<void>((r) => {
        release = r;
      });
      return release;
    },
    /** Cut every open connection (the SSE stream included) at the socket, as a proxy or a network drop would. */
    drop() {
      server.closeAllConnections();
      for (const s of sockets) s.destroy();
    },
    /** Drop everything and stop listening: the port refuses connections until a new server takes it. */
    async stop() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      this.drop();
      await closed;
    },
  };
}

function inputOf(url: string): { runId?: string; cursor?: number; lastEventId?: string } {
  const raw = new URL(url, 'http://x').searchParams.get('input');
  return raw ? JSON.parse(raw) : {};
}

/** A writer that appends small batches to a run until stopped; `written` is the last seq it committed. */
function startWriter(db: Database, runId: string) {
  const state = { written: 0, stopped: false, error: null as unknown };
  const done = (async () => {
    let n = 0;
    while (!state.stopped) {
      const batch = Array.from({ length: 1 + (n % 3) }, () => ({ type: 'log', message: `line ${++n}` }));
      state.written = await appendEvents(db, runId, batch);
      await sleep(15);
    }
  })().catch((e) => {
    state.error = e;
  });
  return {
    get written() {
      return state.written;
    },
    /** Stop writing; returns the final seq. */
    async stop() {
      state.stopped = true;
      await done;
      if (state.error) throw state.error;
      return state.written;
    },
  };
}

/** Subscribe to runs.events with the real client; collects seqs, connection states and errors. */
function subscribe(port: number, input: { runId: string; cursor?: number }) {
  const client = createTRPCClient<AppRouter>({
    links: [httpSubscriptionLink({ url: `http://127.0.0.1:${port}`, EventSource })],
  });
  const seqs: number[] = [];
  const ids: (string | undefined)[] = [];
  const states: string[] = [];
  const errors: unknown[] = [];
  let completed = false;
  const sub = client.runs.events.subscribe(input, {
    onData(envelope) {
      // tracked() events arrive as { id, data }: the SSE id is the event's seq.
      ids.push(envelope.id);
      seqs.push(envelope.data.seq);
    },
    onConnectionStateChange(s) {
      states.push(s.state + (s.error ? `(${s.error.message})` : ''));
    },
    onError(e) {
      errors.push(e);
    },
    onComplete() {
      completed = true;
    },
  });
  return {
    seqs,
    ids,
    states,
    errors,
    get completed() {
      return completed;
    },
    close: () => sub.unsubscribe(),
  };
}

const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
const describeSeqs = (seqs: number[]) => `${seqs.length} seqs, last ${seqs.at(-1) ?? '-'}`;

describe(`runs.events: resuming over HTTP after a dropped connection (${dialect})`, () => {
  let fresh: Awaited<ReturnType<typeof freshDatabase>>;
  before(async () => {
    fresh = await freshDatabase();
  });
  after(async () => {
    await fresh?.close();
  });

  async function newRun() {
    return (await createRun(fresh.db, { name: 'resume test', kind: 'test', seed: 1 })).id;
  }

  type Server = Awaited<ReturnType<typeof serve>>;
  type Writer = ReturnType<typeof startWriter>;
  /**
   * The scenario both outage tests share: stream from 0 while writing, cut the connection with `outage`
   * (which returns once it is over), keep writing, then stop the writer and check what the client got.
   */
  async function resumeScenario(
    outage: (srv: Server, writer: Writer, restart: (port: number) => Promise<Server>) => Promise<Server>,
  ) {
    const runId = await newRun();
    const seen: SeenRequest[] = [];
    let writer: Writer | null = null;
    let clientLast: () => number | null = () => null;
    const probe: Probe = { written: () => writer?.written ?? 0, clientLast: () => clientLast() };
    let srv = await serve(fresh.db, seen, probe);
    const sub = subscribe(srv.port, { runId, cursor: 0 });
    clientLast = () => sub.seqs.at(-1) ?? null;
    writer = startWriter(fresh.db, runId);
    const requests = () => seen.map((r) => `${r.lastEventId ?? '-'}@${r.clientLast ?? '-'}`).join(', ');
    // Every wait below polls for something that must come; the limits only bound a hang (a busy machine may take
    // many seconds for any of them).
    try {
      await until(
        () => sub.seqs.length >= 30,
        60_000,
        () => `the first 30 events (${describeSeqs(sub.seqs)}, states ${sub.states.join(' → ')})`,
      );
      assert.equal(seen[0].lastEventId, null, 'a first connection has no lastEventId');
      const writtenAtDrop = writer.written;
      const requestsAtDrop = seen.length;

      srv = await outage(srv, writer, (port) => serve(fresh.db, seen, probe, port));

      // The client reconnects on its own (eventsource retries after ~3 s) while the writer goes on.
      await until(
        () => seen.length > requestsAtDrop,
        60_000,
        () => `a reconnect request (states ${sub.states.join(' → ')})`,
      );
      const reconnect = seen[requestsAtDrop];
      assert.equal(inputOf(reconnect.url).runId, runId);
      assert.ok(reconnect.lastEventId, `the reconnect request carries lastEventId (url ${reconnect.url})`);
      const resumeFrom = Number(reconnect.lastEventId);
      assert.ok(resumeFrom >= 30, `lastEventId ${reconnect.lastEventId} is past the 30 events seen before the drop`);
      assert.ok(
        sub.states.some((s) => s.startsWith('connecting')),
        `the client noticed the drop (states ${sub.states.join(' → ')})`,
      );

      // Let a few more arrive over the new connection, then stop writing: the stream must end at exactly N.
      await until(
        () => (sub.seqs.at(-1) ?? 0) > writtenAtDrop && seen.at(-1)?.writtenAtAnswer !== undefined,
        60_000,
        () => `events after the reconnect (${describeSeqs(sub.seqs)}; requests ${requests()})`,
      );
      const n = await writer.stop();
      // Seqs arrive in order on a connection, so once N (the largest) is in, any duplicate or gap is already visible.
      await until(
        () => sub.seqs.includes(n),
        60_000,
        () => `the last event ${n} (${describeSeqs(sub.seqs)})`,
      );
      assert.deepEqual(sub.seqs, range(1, n), 'seqs 1..N, each once, in order');
      assert.deepEqual(sub.ids, sub.seqs.map(String), 'each SSE id is its seq');
      // Each reconnect carries the newest id the client had when it asked (a retry repeats it; none goes back).
      for (const r of seen.slice(1))
        assert.equal(r.lastEventId, String(r.clientLast), `a reconnect carries the newest id seen (${requests()})`);
      const ids = seen.slice(1).map((r) => Number(r.lastEventId));
      assert.deepEqual(
        ids,
        [...ids].sort((x, y) => x - y),
        `lastEventIds never go back (${requests()})`,
      );
      // The answer that resumed the stream came after events were written that the client had not seen: it was a
      // resume across a gap, not a reconnect with nothing to catch up on.
      const answered = seen.slice(requestsAtDrop).filter((r) => r.writtenAtAnswer !== undefined);
      assert.ok(
        answered.some((r) => r.writtenAtAnswer! > Number(r.lastEventId)),
        `events were written during the outage (${writtenAtDrop} at the drop; requests ${requests()})`,
      );
      // No reconnect storm: the client waits ~3 s between tries, so a handful at most; tens would be a storm.
      assert.ok(seen.length - 1 <= 10, `at most 10 reconnects (${requests()})`);
      assert.deepEqual(sub.errors, []);
      assert.equal(sub.completed, false);
      // The client ends connected (after a retry that is still being answered, once it is).
      await until(
        () => sub.states.at(-1) === 'pending',
        60_000,
        () => `the client connected (states ${sub.states.join(' → ')})`,
      );
      return { n, resumeFrom, writtenAtDrop };
    } finally {
      sub.close();
      await writer.stop().catch(() => {});
      await srv.stop();
    }
  }

  test('connections cut while the server keeps listening: resumes from lastEventId, no gap, no duplicate', async () => {
    const r = await resumeScenario(async (srv, writer) => {
      // The reconnect is held unanswered until 20 more events are written: the resume must carry them.
      const release = srv.hold();
      const target = writer.written + 20;
      srv.drop();
      await until(
        () => writer.written >= target,
        60_000,
        () => `the writer to pass ${target}`,
      );
      release();
      return srv;
    });
    assert.ok(r.n > r.writtenAtDrop);
  });

  test('server stopped and restarted on the same port: resumes once it is back', async () => {
    await resumeScenario(async (srv, writer, restart) => {
      const { port } = srv;
      await srv.stop();
      // Keep the port closed while the writer adds at least 20 events (the client's retries are refused meanwhile).
      const target = writer.written + 20;
      await until(
        () => writer.written >= target,
        60_000,
        () => `the writer to pass ${target}`,
      );
      return restart(port);
    });
  });

  test('cursor k streams k+1..N, then live events', async () => {
    const runId = await newRun();
    await appendEvents(
      fresh.db,
      runId,
      range(1, 40).map((i) => ({ message: `pre ${i}` })),
    );
    const seen: SeenRequest[] = [];
    const srv = await serve(fresh.db, seen, { written: () => 0, clientLast: () => null });
    const sub = subscribe(srv.port, { runId, cursor: 25 });
    try {
      await until(
        () => sub.seqs.length >= 15,
        60_000,
        () => `seqs 26..40 (${describeSeqs(sub.seqs)})`,
      );
      assert.deepEqual(sub.seqs, range(26, 40));
      const last = await appendEvents(
        fresh.db,
        runId,
        range(1, 5).map((i) => ({ message: `live ${i}` })),
      );
      assert.equal(last, 45);
      await until(
        () => sub.seqs.includes(45),
        60_000,
        () => `live seqs up to 45 (${describeSeqs(sub.seqs)})`,
      );
      assert.deepEqual(sub.seqs, range(26, 45));
      assert.equal(inputOf(seen[0].url).cursor, 25);
      assert.equal(seen[0].lastEventId, null, 'a first connection has no lastEventId');
      assert.deepEqual(sub.errors, []);
    } finally {
      sub.close();
      await srv.stop();
    }
  });

  test('an idle stream polling for a while does not pile up abort listeners on its signal', async () => {
    const runId = await newRun();
    const ac = new AbortController();
    const events = await createCallerFactory(appRouter)(
      { db: fresh.db, principal: TEST_ADMIN },
      { signal: ac.signal },
    ).runs.events({ runId });
    const drained = (async () => {
      for await (const _ of events) {
        /* no events: it just polls */
      }
    })();
    try {
      await sleep(1000); // ~20 polls at 50 ms
      const listeners = getEventListeners(ac.signal, 'abort').length;
      assert.ok(listeners <= 3, `${listeners} abort listeners after ~20 polls (one per poll would be a leak)`);
    } finally {
      ac.abort();
      await drained.catch(() => {});
    }
  });
});
