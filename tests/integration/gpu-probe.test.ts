// @no-database
// The train handler asks the trainer's torch how much memory each GPU has (workers/handlers/gpu-memory.ts) without
// holding the event loop: it runs inside a worker whose job heartbeats share that loop, and importing torch takes
// seconds on a busy machine — the shape of the sandbox probe that once outlasted the test workers' 2 s lease. No GPU
// here, so a named stand-in plays a GPU host's interpreter (it sleeps, as a slow torch import would, then prints what
// torch prints there); the real trainer interpreter answers for this CPU host.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { gpuMemory } from '../../workers/handlers/gpu-memory.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-gpu-probe-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

test('the GPU probe leaves the event loop turning while the interpreter runs, and reads what torch reports', async () => {
  const standIn = path.join(dir, 'python-on-a-gpu-host');
  fs.writeFileSync(standIn, '#!/bin/sh\nsleep 2\necho "[80000000000, 80000000000]"\n', { mode: 0o755 });
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(Date.now()), 100);
  const started = Date.now();
  let sizes: number[] = [];
  try {
    sizes = await gpuMemory('cuda', standIn);
  } finally {
    clearInterval(timer);
  }
  assert.deepEqual(sizes, [8e10, 8e10]);
  // A synchronous spawn would hold the loop for the whole 2 s: no tick at all.
  assert.ok(ticks.filter((t) => t > started).length > 5, `${ticks.length} ticks in ${Date.now() - started} ms`);
});

test('on this CPU host: cpu asks nothing, cuda asks torch and gets no GPU, a broken interpreter gives none', async () => {
  assert.deepEqual(await gpuMemory('cpu', '/nonexistent/python'), []);
  assert.deepEqual(await gpuMemory('cuda', trainerPython()), []);
  assert.deepEqual(await gpuMemory('cuda', '/nonexistent/python'), []);
});
