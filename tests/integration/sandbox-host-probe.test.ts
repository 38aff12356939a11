// @no-database
// Starting a pool probes its host (bubblewrap, the interpreter and what its preloaded modules load) without holding
// the event loop: a pool starts inside a worker, whose job heartbeats share that loop, and a synchronous probe that
// imported numpy, sympy and scipy on a busy machine outlasted the test workers' 2 s lease. Here the interpreter is slow
// on purpose (a wrapper that sleeps before running the real one, standing in for a loaded machine): the loop must keep
// turning while it runs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { checkBubblewrap, interpreterRoot } from '../../workers/sandbox/host-root.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-slow-python-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A python that stamps when it starts and ends (ms since the epoch) around a real interpreter, slowed by `sleepS`. */
function slowPython(sleepS: number) {
  const stamps = path.join(dir, `stamps-${sleepS}`);
  const wrapper = path.join(dir, `python-${sleepS}`);
  fs.writeFileSync(
    wrapper,
    `#!/bin/sh\necho "start $(date +%s%3N)" >> ${stamps}\nsleep ${sleepS}\n/usr/bin/python3 "$@"\nst=$?\necho "end $(date +%s%3N)" >> ${stamps}\nexit $st\n`,
    { mode: 0o755 },
  );
  const windows = () => {
    const lines = fs.existsSync(stamps) ? fs.readFileSync(stamps, 'utf8').trim().split('\n') : [];
    const starts = lines.filter((l) => l.startsWith('start')).map((l) => Number(l.split(' ')[1]));
    const ends = lines.filter((l) => l.startsWith('end')).map((l) => Number(l.split(' ')[1]));
    return starts.map((s, i) => [s, ends[i] ?? Infinity] as const);
  };
  return { wrapper, windows };
}

/** Run `fn` while a 100 ms timer counts its ticks; returns them (ms since the epoch). */
async function ticksDuring(fn: () => Promise<unknown>): Promise<number[]> {
  const ticks: number[] = [];
  const timer = setInterval(() => ticks.push(Date.now()), 100);
  try {
    await fn();
  } finally {
    clearInterval(timer);
  }
  return ticks;
}

test("the interpreter's probe leaves the event loop turning while the interpreter runs", async () => {
  const { wrapper, windows } = slowPython(3);
  let root: Awaited<ReturnType<typeof interpreterRoot>> | undefined;
  const ticks = await ticksDuring(async () => {
    root = await interpreterRoot(wrapper, ['numpy']);
  });
  assert.ok(root && root.roots.length > 0, 'the probe still finds the root');
  const [[start, end]] = windows();
  const inside = ticks.filter((t) => t > start && t < end);
  // The wrapper sleeps 3 s: a loop held by a synchronous spawn would tick 0 times in that window.
  assert.ok(inside.length > 0, `no tick while the interpreter ran (${ticks.length} ticks, window ${end - start} ms)`);
});

test('the isolation check leaves the event loop turning while its probes run', {
  skip: !fs.existsSync('/usr/bin/bwrap') && 'no bubblewrap',
}, async () => {
  const { wrapper, windows } = slowPython(2);
  const ticks = await ticksDuring(() => checkBubblewrap(wrapper));
  const spans = windows();
  assert.ok(spans.length >= 1, 'the interpreter was probed');
  for (const [start, end] of spans)
    assert.ok(
      ticks.some((t) => t > start && t < end),
      `no tick while a probe ran (window ${end - start} ms)`,
    );
});
