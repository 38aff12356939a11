/**
 * bench:roc — the report's RoC ablation (docs/method.md §5 "Why it matters"), in one run on the embedded model:
 * from the same SFT checkpoint, with the same seed, prompts and step count,
 *   GRPO:      G rollouts per prompt, all kept;
 *   GRPO-RoC:  2G rollouts per prompt, G kept (negatives uniformly, positives by 1 / p_total).
 * Per step: accuracy, tool-error rate inside correct trajectories, mean response length. Prints a table and saves a
 * chart (bench/out/roc.svg, and roc.png when Chromium is available). Reports what it measures, whichever way it goes.
 *
 *   npx tsx bench/roc.ts [--steps N] [--prompts P] [--g G] [--quick]
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { parseRecipe, type RecipeInput } from '../contracts/recipe.ts';
import { createRun } from '../server/store/runs.ts';
import { logMetrics } from '../server/store/metrics.ts';
import { Verifier } from '../workers/reward/verifier.ts';
import { SandboxPool } from '../workers/sandbox/pool.ts';
import { TrainerClient } from '../workers/trainer/client.ts';
import { runTraining } from '../workers/train/orchestrator.ts';
import { embeddedPolicy } from '../workers/engines/create.ts';
import { ensureEmbeddedSftModel } from '../tests/helpers/embedded-sft.ts';
import { benchFlags } from './flags.ts';

const flags = benchFlags('bench:roc', 'npx tsx bench/roc.ts [--steps N] [--prompts P] [--g G] [--quick]', { steps: 'number', prompts: 'number', g: 'number', quick: 'boolean' });
const STEPS = (flags.steps as number | undefined) ?? (flags.quick ? 4 : 20);
const PROMPTS = (flags.prompts as number | undefined) ?? 8;
const G = (flags.g as number | undefined) ?? 4;
const OUT = path.join(import.meta.dirname, 'out');

const exportDir = await ensureEmbeddedSftModel({ log: (m) => console.log(`[sft] ${m}`) });
const sftModel = path.join(path.dirname(exportDir), 'model');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-roc-'));
const url = `file:${path.join(tmp, 'bench.db')}`;
await migrate(url);
const db = await openDatabase(url);
const sandbox = await SandboxPool.start({ log: () => {} });
const verifier = new Verifier();

const KEYS = ['rollout/accuracy', 'rollout/tool_error_rate_correct', 'rollout/response_length'] as const;
type Series = Record<(typeof KEYS)[number], number[]>;

async function variant(name: string, roc: boolean): Promise<Series> {
  const input: RecipeInput = {
    name: `bench-${name}`, seed: 7,
    model: { kind: 'model', name: 'sft-fixture' },
    template: { toolName: 'python', variant: 'minimal' },
    stages: [{
      type: 'rl', name: 'rl', data: { kind: 'generated', split: 'train', n: 2000, seed: 11 },
      steps: STEPS, promptsPerStep: PROMPTS, rolloutsPerPrompt: roc ? 2 * G : G, keep: G, roc: { enabled: roc },
      lr: 1e-4, warmupSteps: 2, temperature: 1, maxResponseTokens: 400, maxTurns: 5,
    }],
  };
  const recipe = parseRecipe(input);
  const run = await createRun(db, { name, kind: 'train', recipeSpec: recipe, seed: 7 });
  const trainer = await TrainerClient.start();
  const t0 = Date.now();
  try {
    await runTraining({
      db, runId: run.id, trainer, sandbox, verifier, policyEngine: embeddedPolicy(), runDir: path.join(tmp, run.id), modelDir: () => sftModel,
      log: async (m) => { if (/^step /.test(m)) console.log(`  [${name}] ${m}`); },
      metrics: (s, v) => logMetrics(db, run.id, s, v), progress: async () => {},
    }, recipe);
  } finally {
    await trainer.close();
  }
  console.log(`  [${name}] ${STEPS} steps in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  const out = {} as Series;
  for (const k of KEYS) {
    const pts = await db.prisma.metricPoint.findMany({ where: { runId: run.id, key: k }, orderBy: { step: 'asc' } });
    out[k] = pts.map((p) => p.value);
  }
  return out;
}

console.log(`bench:roc — ${STEPS} steps × ${PROMPTS} prompts from the same SFT checkpoint, seed 7; GRPO (G=${G}) vs GRPO-RoC (2G=${2 * G} → G=${G})`);
const grpo = await variant('grpo', false);
const roc = await variant('grpo-roc', true);

const pct = (x: number | undefined) => (x === undefined ? '   -  ' : `${(100 * x).toFixed(1).padStart(5)}%`);
console.log('\nstep | accuracy GRPO  RoC  | tool errors in correct GRPO  RoC | response length GRPO  RoC');
for (let i = 0; i < STEPS; i++) {
  console.log(`${String(i + 1).padStart(4)} | ${pct(grpo['rollout/accuracy'][i])} ${pct(roc['rollout/accuracy'][i])} | ${pct(grpo['rollout/tool_error_rate_correct'][i])} ${pct(roc['rollout/tool_error_rate_correct'][i])} | ${(grpo['rollout/response_length'][i] ?? 0).toFixed(0).padStart(5)} ${(roc['rollout/response_length'][i] ?? 0).toFixed(0).padStart(5)}`);
}
const lastHalf = (xs: number[]) => { const h = xs.slice(Math.floor(xs.length / 2)); return h.reduce((a, b) => a + b, 0) / Math.max(1, h.length); };
console.log(`\nmean over the second half of training:`);
for (const k of KEYS) console.log(`  ${k.padEnd(34)} GRPO ${lastHalf(grpo[k]).toFixed(3)}   GRPO-RoC ${lastHalf(roc[k]).toFixed(3)}`);

fs.mkdirSync(OUT, { recursive: true });
const svg = chart([
  { title: 'accuracy', a: grpo['rollout/accuracy'], b: roc['rollout/accuracy'] },
  { title: 'tool-error rate in correct trajectories', a: grpo['rollout/tool_error_rate_correct'], b: roc['rollout/tool_error_rate_correct'] },
  { title: 'mean response length (tokens)', a: grpo['rollout/response_length'], b: roc['rollout/response_length'] },
]);
fs.writeFileSync(path.join(OUT, 'roc.svg'), svg);
try {
  const { chromium } = await import('@playwright/test');
  const browser = await chromium.launch({ executablePath: fs.existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined });
  const page = await browser.newPage({ viewport: { width: 960, height: 320 } });
  await page.setContent(`<body style="margin:0">${svg}</body>`);
  await page.screenshot({ path: path.join(OUT, 'roc.png') });
  await browser.close();
  console.log(`chart: ${path.join(OUT, 'roc.svg')} and roc.png`);
} catch {
  console.log(`chart: ${path.join(OUT, 'roc.svg')} (no PNG: Chromium not available)`);
}

await verifier.close();
await sandbox.close();
await db.close();
fs.rmSync(tmp, { recursive: true, force: true });

/** Three small line charts side by side; GRPO grey, GRPO-RoC blue. */
function chart(panels: { title: string; a: number[]; b: number[] }[]): string {
  const W = 320, H = 320, P = 40;
  const body = panels.map((p, k) => {
    const all = [...p.a, ...p.b];
    const max = Math.max(1e-9, ...all) * 1.1;
    const n = Math.max(p.a.length, p.b.length, 2);
    const x = (i: number) => k * W + P + ((W - 2 * P) * i) / (n - 1);
    const y = (v: number) => H - P - ((H - 2 * P) * v) / max;
    const line = (xs: number[], color: string) => `<polyline fill="none" stroke="${color}" stroke-width="2" points="${xs.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ')}"/>`;
    return `<g><text x="${k * W + W / 2}" y="20" text-anchor="middle" font-size="13">${p.title}</text>
      <line x1="${k * W + P}" y1="${H - P}" x2="${k * W + W - P}" y2="${H - P}" stroke="#999"/><line x1="${k * W + P}" y1="${P}" x2="${k * W + P}" y2="${H - P}" stroke="#999"/>
      <text x="${k * W + P - 4}" y="${P + 4}" text-anchor="end" font-size="10">${max.toFixed(max < 2 ? 2 : 0)}</text><text x="${k * W + P - 4}" y="${H - P}" text-anchor="end" font-size="10">0</text>
      <text x="${k * W + W / 2}" y="${H - 12}" text-anchor="middle" font-size="10">step</text>
      ${line(p.a, '#888')}${line(p.b, '#1f6feb')}</g>`;
  }).join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W * panels.length}" height="${H}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${body}
    <text x="10" y="${H - 4}" font-size="11" fill="#888">— GRPO</text><text x="80" y="${H - 4}" font-size="11" fill="#1f6feb">— GRPO-RoC</text></svg>`;
}
