// @no-database: runs once, not once per database.
// Load: 10,000 calls at concurrency 256, 5% of them crashing, timing out or exhausting memory. Every call
// returns exactly one result (each prints a unique token), and no process is left over afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SandboxPool } from '../../workers/sandbox/pool.ts';
import { descendants, ps } from '../helpers/proc.ts';
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
  for (let i = 0; i < N; i++) {
    const r = results[i];
    if (!r) {
      wrong.push(`${i}: no result`);
      continue;
    }
    const expect = { ok: 'ok', crash: 'error', timeout: 'timeout', memory: 'memory' }[kind(i)];
    if (r.status !== expect || r.stdout !== `tok-${i}\n`)
      wrong.push(`${i}: ${kind(i)} -> ${r.status} ${JSON.stringify(r.stdout)}`);
  }
  assert.deepEqual(wrong.slice(0, 20), [], `${wrong.length} calls with a wrong result`);
  await pool.close();
  // Zombies (<defunct>) run nothing; reaping them is the job of whatever they were reparented to on the host.
  const left = () =>
    ps()
      .filter((p) => uids.has(p.uid) && !p.args.includes('<defunct>'))
      .map((p) => `${p.uid} ${p.pid} ${p.args}`);
  for (let i = 0; i < 100 && left().length; i++) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(left(), [], 'no process of the pool left');
});
