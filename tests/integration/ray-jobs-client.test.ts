// @no-database. The Ray Jobs client tells a head that is gone from one that is busy (workers/cluster/ray-jobs.ts):
// a run's worker fails the run 30 s after its head stops taking connections, but a head that takes them and answers
// late is waited for (on 2 cores beside another load, a real head's dashboard once answered nothing for over 30 s
// while the run went on, and the run was failed as if its head were lost). A real local server plays each head.
import assert from 'node:assert/strict';
import http from 'node:http';
import type net from 'node:net';
import { test } from 'node:test';
import { RayJobsClient, RayJobsError } from '../../workers/cluster/ray-jobs.ts';

const listen = (server: net.Server) =>
  new Promise<number>((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)),
  );
const failure = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return e as RayJobsError;
  }
  assert.fail('the request should have failed');
};

test('a head that takes the connection but answers nothing in time is busy; one that refuses it is not', async () => {
  const held: http.ServerResponse[] = [];
  const busy = http.createServer((_req, res) => held.push(res)); // takes every request, answers none
  const port = await listen(busy);
  try {
    const e = await failure(new RayJobsClient(`http://127.0.0.1:${port}`, 'token', 300).status('job-1'));
    assert.ok(e instanceof RayJobsError);
    assert.equal(e.busy, true);
    assert.equal(e.status, undefined);
    assert.match(e.message, /connected, but no answer within 300 ms/);
  } finally {
    for (const r of held) r.destroy();
    busy.close();
  }

  // The same port once nothing listens there: the connection is refused at once, as a stopped head's is. (The
  // client's limit is not what is tested here, so it is one a stalled test process cannot outlast.)
  const gone = await failure(new RayJobsClient(`http://127.0.0.1:${port}`, 'token', 60_000).status('job-1'));
  assert.ok(gone instanceof RayJobsError);
  assert.equal(gone.busy, false);
  assert.match(gone.message, /cannot be reached: .*ECONNREFUSED/);

  // A head that answers, late or not, with an HTTP error is neither: its status says what it said.
  const refusing = http.createServer((_req, res) => res.writeHead(503).end('overloaded'));
  const p2 = await listen(refusing);
  try {
    const e = await failure(new RayJobsClient(`http://127.0.0.1:${p2}`, 'token', 60_000).status('job-1'));
    assert.equal(e.status, 503);
    assert.equal(e.busy, false);
  } finally {
    refusing.close();
  }
});
