/**
 * bench:trace — how long the trace inspector takes to show a 30-turn trajectory (issue target: under a second), in
 * Debian's Chromium against the built app (`scripts/start.mjs --serve-only` on its own port and data folder): the
 * turns view and the token view, side by side in one run.
 *
 *   npx tsx bench/trace.ts [--turns N] [--runs R] [--tokens-per-turn T]
 *
 * No embedded model makes 30 calls, so the trajectory is assembled turn by turn with real sandbox results (each
 * turn's code runs in the real pool): its text, code and outputs have the sizes real ones have. Each turn's text is
 * padded to ~T model tokens (300 by default) with engine logprobs and entropies, and the stored token record has
 * the trainer's side too (old logprobs, TIS weights, every clip state), so the token view colours everything.
 * Timed: navigation start → the last turn and the last tool output visible (turns view), or → the last turn's
 * tokens visible (token view, `?view=tokens`); the first load, then the median of warm loads.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { chromium } from '@playwright/test';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { createRun } from '../server/store/runs.ts';
import { insertTrajectories } from '../server/store/trajectories.ts';
import { CharTokenizer, embeddedTokenizerSpec } from '../workers/engines/tokenizer.ts';
import { buildPrompt, EMBEDDED_TEMPLATE_SETTINGS as S, toolResponseTurn } from '../workers/rollout/template.ts';
import { toTrajectoryInput } from '../workers/rollout/to-store.ts';
import {
  appendAssistantTurn,
  appendToolResult,
  finishTrajectory,
  newTrajectory,
} from '../workers/rollout/trajectory.ts';
import { formatToolResult } from '../workers/sandbox/format.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { mulberry32 } from '../workers/engines/sampling.ts';
import { tokenRecord } from '../workers/policy/token-record.ts';
import type { ClipState } from '../contracts/trajectory.ts';
import { benchFlags } from './flags.ts';

const flags = benchFlags('bench:trace', 'npx tsx bench/trace.ts [--turns N] [--runs R] [--tokens-per-turn T]', {
  turns: 'number',
  runs: 'number',
  'tokens-per-turn': 'number',
});
const TURNS = (flags.turns as number | undefined) ?? 30;
const RUNS = (flags.runs as number | undefined) ?? 5;
const PER_TURN = (flags['tokens-per-turn'] as number | undefined) ?? 300;
const ROOT = path.resolve(import.meta.dirname, '..');
const PORT = 3290;
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-trace-'));
const url = `file:${path.join(dataDir, 'toolsmith.db')}`;
await migrate(url);
const db = await openDatabase(url);

// A 30-turn trajectory: each turn reasons, calls the tool with real code, gets the real sandbox's answer.
const tok = new CharTokenizer(embeddedTokenizerSpec());
const sandbox = await SandboxPool.start({ size: 1, log: () => {} });
const prompt = buildPrompt('How many of 1..100000 are multiples of 7 or 11?', S);
let t = newTrajectory(prompt, tok.encode(prompt).length);
let clock = Date.now();
const rnd = mulberry32(12);
const REASONING =
  'We count multiples of 7 and of 11, subtract the multiples of 77, and check the count against a direct scan of the range. ';
/** Reasoning of about `n` characters (one token each with the char tokenizer). */
const reasoning = (n: number) => REASONING.repeat(Math.ceil(n / REASONING.length)).slice(0, Math.max(0, n));
for (let i = 0; i < TURNS; i++) {
  const last = i === TURNS - 1;
  const code =
    i % 5 === 3
      ? `prnt(${i})`
      : `import math\nxs = [n for n in range(1, ${1000 * (i + 1)}) if n % 7 == 0 or n % 11 == 0]\nprint(len(xs), math.gcd(${i + 12}, 18))\nprint(xs[:20])`;
  const tail = last
    ? `All checks agree.</reason>\n<answer>\\boxed{22078}</answer><|im_end|>`
    : `Check ${i}: count the multiples below ${1000 * (i + 1)} and compare with inclusion-exclusion.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code, input: '' } })}\n</tool_call>`;
  const text = reasoning(PER_TURN - tok.encode(tail).length) + tail;
  const ids = tok.encode(text);
  t = appendAssistantTurn(
    t,
    {
      text,
      tokens: ids.length,
      tokenIds: ids,
      logprobs: ids.map(() => Math.log(0.02 + 0.98 * rnd())),
      engineFinish: 'stop',
      genStartedAt: clock,
      genFinishedAt: clock + 400,
    },
    S,
  );
  t = { ...t, turns: t.turns.map((x, k) => (k === i ? { ...x, entropies: ids.map(() => 3 * rnd()) } : x)) };
  clock += 400;
  if (last) break;
  const r = await sandbox.run({ code });
  const out = formatToolResult(r);
  const appended = toolResponseTurn(out, S);
  t = appendToolResult(t, {
    name: 'python',
    arguments: { code, input: '' },
    status: r.status,
    text: out,
    appendedText: appended,
    tokens: tok.encode(appended).length,
    appended: true,
    queuedAt: clock,
    startedAt: clock + r.queueMs,
    finishedAt: clock + r.queueMs + r.durationMs,
    durationMs: r.durationMs,
    queueMs: r.queueMs,
    stdout: r.stdout,
    stderr: r.stderr,
    exitCode: r.exitCode,
    errorType: r.errorType,
  });
  clock += r.queueMs + r.durationMs + 5;
}
t = finishTrajectory(t, 'no_tool_call', clock);
await sandbox.close();
const run = await createRun(db, { name: 'bench-trace', kind: 'train', seed: 0 });
// The trainer's side of the record, as a trained-on trajectory has it: old logprobs near the engine's, TIS weights, clip states.
const engineSide = tokenRecord(t, tok, null);
const n = engineSide.ids.length;
const trainerLogprobs = engineSide.rolloutLogprobs.map((x) => (Number.isNaN(x) ? null : x + 0.05 * (rnd() - 0.5)));
const clip = Array.from({ length: n }, (): ClipState => {
  const u = rnd();
  return u < 0.9 ? 0 : ((1 + Math.floor((u - 0.9) * 50)) as ClipState);
});
const record = tokenRecord(t, tok, {
  trainerLogprobs,
  weights: clip.map((c) => (c === 5 ? 0 : c === 4 ? 2 : 1)),
  clip,
  advantage: 0.8,
});
const input = toTrajectoryInput(
  t,
  { reward: 1, correct: true, verdict: { correct: true, method: 'exact', extracted: '22078', reason: 'equal' } },
  {
    runId: run.id,
    step: 1,
    stage: 0,
    split: 'train',
    problemId: null,
    groupId: 'g000',
    sampleIndex: 0,
    selected: true,
    selectReason: 'kept',
    pErr: 0.14,
    pFormat: 0,
  },
  record,
);
await insertTrajectories(db, [input]);
const trajectoryId = (await db.prisma.trajectory.findFirstOrThrow({ where: { runId: run.id } })).id;
await db.close();

const server = spawn(process.execPath, ['scripts/start.mjs', '--serve-only'], {
  cwd: ROOT,
  env: {
    ...process.env,
    PORT: String(PORT),
    TOOLSMITH_DATA_DIR: dataDir,
    DATABASE_URL: '',
    NEXT_TELEMETRY_DISABLED: '1',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`http://127.0.0.1:${PORT}/api/trpc/system.health`).catch(() => null))?.ok) break;
    if (i > 600) throw new Error('the web server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu'],
  });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  // Interleaved (turns, tokens, turns, …) so drift on a shared machine hits both views alike.
  const times = { turns: [] as number[], tokens: [] as number[] };
  const lastModel = record.mask.lastIndexOf(1);
  for (let i = 0; i < RUNS + 1; i++) {
    let t0 = performance.now();
    await page.goto(`http://127.0.0.1:${PORT}/trajectories/${trajectoryId}`);
    await page.getByRole('article', { name: `turn ${TURNS}` }).waitFor();
    await page.getByRole('region', { name: `turn ${TURNS - 1} tool output` }).waitFor();
    times.turns.push(performance.now() - t0);
    t0 = performance.now();
    await page.goto(`http://127.0.0.1:${PORT}/trajectories/${trajectoryId}?view=tokens`);
    await page
      .getByRole('article', { name: `turn ${TURNS} tokens` })
      .locator(`[data-i="${lastModel}"]`)
      .waitFor();
    times.tokens.push(performance.now() - t0);
  }
  // The view is complete: one span per model token, one greyed piece per appended tool response.
  const spans = await page.locator('[data-kind="model"]').count();
  const toolPieces = await page.locator('[data-kind="tool"]').count();
  if (spans !== record.mask.filter((m) => m === 1).length || toolPieces !== TURNS - 1)
    throw new Error(`token view shows ${spans} model tokens and ${toolPieces} tool pieces`);
  await browser.close();
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(
    `bench:trace — trace inspector, ${TURNS}-turn trajectory (${input.responseTokens} response tokens: ${spans} model tokens, ~${Math.round(spans / TURNS)} per turn; ${TURNS - 1} tool calls), Chromium at 1280×800`,
  );
  for (const [name, xs] of [
    ['turns view', times.turns],
    ['token view', times.tokens],
  ] as const) {
    const [cold, ...warm] = xs;
    const sorted = [...warm].sort((a, b) => a - b);
    console.log(
      `  ${name}: first load ${cold!.toFixed(0)} ms; warm median of ${warm.length} ${med(warm).toFixed(0)} ms (min ${sorted[0]!.toFixed(0)}, max ${sorted.at(-1)!.toFixed(0)}) — target under 1000 ms ${med(warm) < 1000 ? 'met' : 'NOT met'}`,
    );
  }
  console.log(
    `  token view ÷ turns view (warm medians, same run): ${(med(times.tokens.slice(1)) / med(times.turns.slice(1))).toFixed(2)}×`,
  );
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
