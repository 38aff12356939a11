// @no-database: runs once, not once per database.
// Load: 10,000 calls at concurrency 256, 5% of them crashing, timing out or exhausting memory. Every call
// returns exactly one result (each prints a unique token), and no process is left over afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { descendants, ps, waitFor } from '../helpers/proc.ts';
import type { SandboxCall, SandboxResult } from '../../workers/sandbox/types.ts';

const N = 10_000;
const CONCURRENCY = 256;

function kind(i: number): 'ok' | 'crash' | 'timeout' | 'memory' {
  if (i % 20 !== 7) return 'ok';
  return (['crash', 'timeout', 'memory'] as const)[Math.floor(i / 20) % 3];
}
function callFor(i: number): SandboxCall {
  const tok = `tok-${i}`;
  switch (kind(i)) {
    case 'ok':
      return { code: `print(${JSON.stringify(tok)})` };
    case 'crash':
      return { code: `print(${JSON.stringify(tok)}, flush=True)\nimport ctypes\nctypes.string_at(0)` };
    case 'timeout':
      return { code: `print(${JSON.stringify(tok)}, flush=True)\nwhile True: pass`, timeoutS: 0.3 };
    case 'memory':
      return { code: `print(${JSON.stringify(tok)}, flush=True)\nx = bytearray(2 << 30)`, memoryMb: 256 };
  }
}

test('10,000 calls at concurrency 256 with 5% crashing, timing out or exhausting memory', {
  timeout: 600_000,
}, async () => {
  const pool = await SandboxPool.start({ size: 2, log: () => {} });
  // This pool's uids: those of the zygotes under this process (other pools may run on the machine meanwhile).
  const uids = new Set(
    descendants()
      .filter((p) => p.args.includes('/run/toolsmith/zygote.py') && p.uid >= 100000)
      .map((p) => p.uid),
  );
  assert.equal(uids.size, pool.status().interpreters, 'found every interpreter of this pool');
  const results: (SandboxResult | undefined)[] = new Array(N);
  let resolvedTwice = 0;
  let next = 0;
  const t0 = Date.now();
  async function worker() {
    while (next < N) {
      const i = next++;
      const r = await pool.run(callFor(i));
      if (results[i]) resolvedTwice++;
      results[i] = r;
    }
  }
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    console.log(`# load: ${N} calls in ${((Date.now() - t0) / 1000).toFixed(1)} s; ${JSON.stringify(pool.status())}`);
  }
  assert.equal(resolvedTwice, 0);
  const wrong: string[] = [];
  let killedBeforeTheirPrint = 0;
  for (let i = 0; i < N; i++) {
    const r = results[i];
    if (!r) {
      wrong.push(`${i}: no result`);
      continue;
    }
    const expect = { ok: 'ok', crash: 'error', timeout: 'timeout', memory: 'memory' }[kind(i)];
    // A call stopped at its 0.3 s wall clock prints its token first only if the machine ran it that soon: one that
    // got no CPU in time (both cores busy) is answered with nothing. Never with another call's token.
    const early = kind(i) === 'timeout' && r.stdout === '';
    if (early) killedBeforeTheirPrint++;
    if (r.status !== expect || (r.stdout !== `tok-${i}\n` && !early))
      wrong.push(`${i}: ${kind(i)} -> ${r.status} ${JSON.stringify(r.stdout)}`);
  }
  const timeouts = Array.from({ length: N }, (_, i) => kind(i)).filter((k) => k === 'timeout').length;
  console.log(`# load: ${killedBeforeTheirPrint} of ${timeouts} timed-out calls were stopped before their print`);
  assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} calls with a wrong result`);
  // What a timed-out call printed is kept: that most of them got to print in 0.3 s is up to the machine, that none
  // of the ~170 did would mean their output is lost.
  assert.ok(killedBeforeTheirPrint < timeouts, 'the output of a call stopped at its timeout is kept');
  await pool.close();
  // Zombies (<defunct>) run nothing; reaping them is the job of whatever they were reparented to on the host.
  const left = () =>
    ps()
      .filter((p) => uids.has(p.uid) && !p.args.includes('<defunct>'))
      .map((p) => `${p.uid} ${p.pid} ${p.args}`);
  // The processes go as the kernel gets to them: wait for that (the bound only fails a test where some never go).
  await waitFor('no process of the pool left', () => left().length === 0, {
    timeoutMs: 60_000,
    detail: () => left().join('\n'),
  });
});
