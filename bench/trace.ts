/**
 * bench:trace — how long the trace inspector takes to show a 30-turn trajectory (issue target: under a second), in
 * Debian's Chromium against the built app (`scripts/start.mjs --serve-only` on its own port and data folder).
 *
 *   npx tsx bench/trace.ts [--turns N] [--runs R]
 *
 * No embedded model makes 30 calls, so the trajectory is assembled turn by turn with real sandbox results (each
 * turn's code runs in the real pool): its text, code and outputs have the sizes real ones have. Timed: navigation
 * start → the last turn and the last tool output visible; the first load, then the median of warm loads.
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
import { appendAssistantTurn, appendToolResult, finishTrajectory, newTrajectory } from '../workers/rollout/trajectory.ts';
import { formatToolResult } from '../workers/sandbox/format.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { benchFlags } from './flags.ts';

const flags = benchFlags('bench:trace', 'npx tsx bench/trace.ts [--turns N] [--runs R]', { turns: 'number', runs: 'number' });
const TURNS = (flags.turns as number | undefined) ?? 30;
const RUNS = (flags.runs as number | undefined) ?? 5;
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
for (let i = 0; i < TURNS; i++) {
  const last = i === TURNS - 1;
  const code = i % 5 === 3 ? `prnt(${i})` : `import math\nxs = [n for n in range(1, ${1000 * (i + 1)}) if n % 7 == 0 or n % 11 == 0]\nprint(len(xs), math.gcd(${i + 12}, 18))\nprint(xs[:20])`;
  const text = last
    ? `All checks agree.</reason>\n<answer>\\boxed{22078}</answer><|im_end|>`
    : `Check ${i}: count the multiples below ${1000 * (i + 1)} and compare with inclusion-exclusion.</reason>\n<tool_call>\n${JSON.stringify({ name: 'python', arguments: { code, input: '' } })}\n</tool_call>`;
  t = appendAssistantTurn(t, { text, tokens: tok.encode(text).length, engineFinish: 'stop', genStartedAt: clock, genFinishedAt: clock + 400 }, S);
  clock += 400;
  if (last) break;
  const r = await sandbox.run({ code });
  const out = formatToolResult(r);
  const appended = toolResponseTurn(out, S);
  t = appendToolResult(t, {
    name: 'python', arguments: { code, input: '' }, status: r.status, text: out, appendedText: appended, tokens: tok.encode(appended).length, appended: true,
    queuedAt: clock, startedAt: clock + r.queueMs, finishedAt: clock + r.queueMs + r.durationMs, durationMs: r.durationMs, queueMs: r.queueMs,
    stdout: r.stdout, stderr: r.stderr, exitCode: r.exitCode, errorType: r.errorType,
  });
  clock += r.queueMs + r.durationMs + 5;
}
t = finishTrajectory(t, 'no_tool_call', clock);
await sandbox.close();
const run = await createRun(db, { name: 'bench-trace', kind: 'train', seed: 0 });
const input = toTrajectoryInput(t, { reward: 1, correct: true, verdict: { correct: true, method: 'exact', extracted: '22078', reason: 'equal' } },
  { runId: run.id, step: 1, stage: 0, split: 'train', problemId: null, groupId: 'g000', sampleIndex: 0, selected: true, selectReason: 'kept', pErr: 0.14, pFormat: 0 });
await insertTrajectories(db, [input]);
const trajectoryId = (await db.prisma.trajectory.findFirstOrThrow({ where: { runId: run.id } })).id;
await db.close();

const server = spawn(process.execPath, ['scripts/start.mjs', '--serve-only'], {
  cwd: ROOT, env: { ...process.env, PORT: String(PORT), TOOLSMITH_DATA_DIR: dataDir, DATABASE_URL: '', NEXT_TELEMETRY_DISABLED: '1' }, stdio: ['ignore', 'pipe', 'pipe'],
});
try {
  for (let i = 0; ; i++) {
    if ((await fetch(`http://127.0.0.1:${PORT}/api/trpc/system.health`).catch(() => null))?.ok) break;
    if (i > 600) throw new Error('the web server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const times: number[] = [];
  for (let i = 0; i < RUNS + 1; i++) {
    const t0 = performance.now();
    await page.goto(`http://127.0.0.1:${PORT}/trajectories/${trajectoryId}`);
    await page.getByRole('article', { name: `turn ${TURNS}` }).waitFor();
    await page.getByRole('region', { name: `turn ${TURNS - 1} tool output` }).waitFor();
    times.push(performance.now() - t0);
  }
  await browser.close();
  const [cold, ...warm] = times;
  warm.sort((a, b) => a - b);
  console.log(`bench:trace — trace inspector, ${TURNS}-turn trajectory (${input.responseTokens} response tokens, ${TURNS - 1} tool calls), Chromium at 1280×800`);
  console.log(`  first load (cold caches): ${cold!.toFixed(0)} ms`);
  console.log(`  warm, median of ${warm.length}: ${warm[Math.floor(warm.length / 2)]!.toFixed(0)} ms (min ${warm[0]!.toFixed(0)}, max ${warm.at(-1)!.toFixed(0)})`);
  console.log(`  target: under 1000 ms — ${warm[Math.floor(warm.length / 2)]! < 1000 ? 'met' : 'NOT met'}`);
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  fs.rmSync(dataDir, { recursive: true, force: true });
}
