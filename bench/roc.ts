/**
 * bench:roc — the report's RoC ablation (docs/method.md §5 "Why it matters") on the embedded model, over several
 * seeds per arm: from the same SFT checkpoint, with the same prompts (per seed) and step count,
 *   GRPO G:     G rollouts per prompt, all kept;
 *   GRPO-RoC:   2G rollouts per prompt, G kept (negatives uniformly, positives by 1 / p_total);
 *   GRPO 2G:    2G rollouts per prompt, all kept — so that RoC is not credited with its extra samples.
 * Per step and arm: the mean over seeds of accuracy, tool-error rate inside correct trajectories and response
 * length, with a 95% band (t over seeds); second-half means with intervals, and RoC's paired difference from each
 * GRPO arm (paired by seed). Prints tables and saves a chart with bands (bench/out/roc.svg, roc.png when Chromium is
 * available). Reports what it measures, whichever way it goes.
 *
 *   npx tsx bench/roc.ts [--seeds N] [--steps N] [--prompts P] [--g G] [--quick]
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
import { ensureEmbeddedSftModel, sftCheckpointDir } from '../tests/helpers/embedded-sft.ts';
import { benchFlags } from './flags.ts';
import { tInterval } from './t-interval.ts';

const flags = benchFlags('bench:roc', 'npx tsx bench/roc.ts [--seeds N] [--steps N] [--prompts P] [--g G] [--quick]', {
  seeds: 'number',
  steps: 'number',
  prompts: 'number',
  g: 'number',
  quick: 'boolean',
});
const STEPS = (flags.steps as number | undefined) ?? (flags.quick ? 4 : 16);
const SEEDS = (flags.seeds as number | undefined) ?? (flags.quick ? 2 : 3);
const PROMPTS = (flags.prompts as number | undefined) ?? 8;
const G = (flags.g as number | undefined) ?? 4;
const OUT = path.join(import.meta.dirname, 'out');

await ensureEmbeddedSftModel({ log: (m) => console.log(`[sft] ${m}`) });
const sftModel = sftCheckpointDir();
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-roc-'));
const url = `file:${path.join(tmp, 'bench.db')}`;
await migrate(url);
const db = await openDatabase(url);
const sandbox = await SandboxPool.start({ log: () => {} });
const verifier = new Verifier();

const KEYS = ['rollout/accuracy', 'rollout/tool_error_rate_correct', 'rollout/response_length'] as const;
type Key = (typeof KEYS)[number];
type Series = Record<Key, number[]>;
interface Arm {
  id: string;
  label: string;
  rollouts: number;
  keep: number;
  roc: boolean;
  color: string;
}
const ARMS: Arm[] = [
  { id: 'grpo', label: `GRPO G=${G}`, rollouts: G, keep: G, roc: false, color: '#888888' },
  { id: 'roc', label: `GRPO-RoC 2G=${2 * G}→G=${G}`, rollouts: 2 * G, keep: G, roc: true, color: '#1f6feb' },
  { id: 'grpo2g', label: `GRPO 2G=${2 * G}`, rollouts: 2 * G, keep: 2 * G, roc: false, color: '#d29922' },
];

async function variant(arm: Arm, seed: number): Promise<Series> {
  const name = `${arm.id}-s${seed}`;
  const input: RecipeInput = {
    name: `bench-${name}`,
    seed: 7 + seed,
    model: { kind: 'model', name: 'sft-fixture' },
    template: { toolName: 'python', variant: 'minimal' },
    stages: [
      {
        type: 'rl',
        name: 'rl',
        data: { kind: 'generated', split: 'train', n: 2000, seed: 11 + seed },
        steps: STEPS,
        promptsPerStep: PROMPTS,
        rolloutsPerPrompt: arm.rollouts,
        keep: arm.keep,
        roc: { enabled: arm.roc },
        lr: 1e-4,
        warmupSteps: 2,
        temperature: 1,
        maxResponseTokens: 400,
        maxTurns: 5,
      },
    ],
  };
  const recipe = parseRecipe(input);
  const run = await createRun(db, { name, kind: 'train', recipeSpec: recipe, seed: 7 + seed });
  const trainer = await TrainerClient.start();
  const t0 = Date.now();
  try {
    await runTraining(
      {
        db,
        runId: run.id,
        trainer,
        sandbox,
        verifier,
        policyEngine: embeddedPolicy(),
        runDir: path.join(tmp, run.id),
        modelDir: () => sftModel,
        log: async () => {},
        metrics: (s, v) => logMetrics(db, run.id, s, v),
        progress: async () => {},
      },
      recipe,
    );
  } finally {
    await trainer.close();
  }
  const out = {} as Series;
  for (const k of KEYS) {
    const pts = await db.prisma.metricPoint.findMany({ where: { runId: run.id, key: k }, orderBy: { step: 'asc' } });
    out[k] = pts.map((p) => p.value);
  }
  console.log(
    `  [${arm.label}, seed ${seed}] ${STEPS} steps in ${((Date.now() - t0) / 1000).toFixed(0)} s; second-half accuracy ${pct(secondHalf(out['rollout/accuracy']))}`,
  );
  return out;
}

const secondHalf = (xs: number[]) => {
  const h = xs.slice(Math.floor(xs.length / 2));
  return h.reduce((a, b) => a + b, 0) / Math.max(1, h.length);
};
const pct = (x: number | undefined) =>
  x === undefined || !Number.isFinite(x) ? '   -  ' : `${(100 * x).toFixed(1).padStart(5)}%`;
const fmt = (k: Key, x: number) => (k === 'rollout/response_length' ? x.toFixed(0) : pct(x).trim());

console.log(
  `bench:roc — ${ARMS.length} arms × ${SEEDS} seeds, ${STEPS} steps × ${PROMPTS} prompts each, from the same SFT checkpoint`,
);
const t0 = Date.now();
const runs: Record<string, Series[]> = {};
for (let seed = 0; seed < SEEDS; seed++) for (const arm of ARMS) (runs[arm.id] ??= []).push(await variant(arm, seed));
console.log(`  all runs: ${((Date.now() - t0) / 60000).toFixed(1)} min`);

/** Per step: the mean over seeds and its 95% band. */
const perStep = (arm: Arm, k: Key) =>
  Array.from({ length: STEPS }, (_, i) =>
    tInterval(runs[arm.id]!.map((s) => s[k][i]).filter((v): v is number => v !== undefined)),
  );

for (const k of KEYS) {
  console.log(`\n${k}: mean over ${SEEDS} seeds [95% band] per step`);
  console.log(`step | ${ARMS.map((a) => a.label.padEnd(26)).join(' | ')}`);
  const cols = ARMS.map((a) => perStep(a, k));
  for (let i = 0; i < STEPS; i++)
    console.log(
      `${String(i + 1).padStart(4)} | ${cols.map((c) => `${fmt(k, c[i]!.mean)} [${fmt(k, c[i]!.lo)}, ${fmt(k, c[i]!.hi)}]`.padEnd(26)).join(' | ')}`,
    );
}

console.log(
  `\nsecond half of training (steps ${Math.floor(STEPS / 2) + 1}–${STEPS}), mean over seeds [95% interval, t over ${SEEDS} seeds]:`,
);
for (const k of KEYS) {
  const cells = ARMS.map((a) => {
    const t = tInterval(runs[a.id]!.map((s) => secondHalf(s[k])));
    return `${a.label} ${fmt(k, t.mean)} [${fmt(k, t.lo)}, ${fmt(k, t.hi)}]`;
  });
  const diff = (other: string) => {
    const d = tInterval(runs.roc!.map((s, i) => secondHalf(s[k]) - secondHalf(runs[other]![i]![k])));
    const f = (x: number) =>
      k === 'rollout/response_length'
        ? `${x >= 0 ? '+' : ''}${x.toFixed(0)}`
        : `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)} pts`;
    return `${f(d.mean)} [${f(d.lo)}, ${f(d.hi)}]`;
  };
  const line = `  ${k.padEnd(32)} ${cells.join('   ')}\n  ${''.padEnd(32)} RoC − GRPO G: ${diff('grpo')}   RoC − GRPO 2G: ${diff('grpo2g')}`;
  console.log(line);
}

fs.mkdirSync(OUT, { recursive: true });
const svg = chart(
  KEYS.map((k) => ({
    title:
      k === 'rollout/accuracy'
        ? 'accuracy'
        : k === 'rollout/tool_error_rate_correct'
          ? 'tool-error rate in correct trajectories'
          : 'mean response length (tokens)',
    arms: ARMS.map((a) => ({ color: a.color, pts: perStep(a, k) })),
  })),
);
fs.writeFileSync(path.join(OUT, 'roc.svg'), svg);
try {
  const { chromium } = await import('@playwright/test');
  const browser = await chromium.launch({
    executablePath: fs.existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined,
  });
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

/** Three small charts side by side: each arm's per-step mean over seeds, with its 95% band shaded. */
function chart(
  panels: { title: string; arms: { color: string; pts: { mean: number; lo: number; hi: number }[] }[] }[],
): string {
  const W = 320,
    H = 320,
    P = 40;
  const body = panels
    .map((p, k) => {
      const all = p.arms.flatMap((a) => a.pts.flatMap((q) => [q.mean, q.hi])).filter(Number.isFinite);
      const max = Math.max(1e-9, ...all) * 1.1;
      const n = Math.max(2, ...p.arms.map((a) => a.pts.length));
      const x = (i: number) => k * W + P + ((W - 2 * P) * i) / (n - 1);
      const y = (v: number) => H - P - ((H - 2 * P) * Math.max(0, Math.min(max, v))) / max;
      const xy = (i: number, v: number) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`;
      const arms = p.arms
        .map((a) => {
          const ok = a.pts.map((q, i) => ({ q, i })).filter(({ q }) => Number.isFinite(q.lo) && Number.isFinite(q.hi));
          const band =
            ok.length > 1
              ? `<polygon fill="${a.color}" fill-opacity="0.15" stroke="none" points="${[...ok.map(({ q, i }) => xy(i, q.hi)), ...ok.reverse().map(({ q, i }) => xy(i, q.lo))].join(' ')}"/>`
              : '';
          return `${band}<polyline fill="none" stroke="${a.color}" stroke-width="2" points="${a.pts.map((q, i) => xy(i, q.mean)).join(' ')}"/>`;
        })
        .join('');
      return `<g><text x="${k * W + W / 2}" y="20" text-anchor="middle" font-size="13">${p.title}</text>
      <line x1="${k * W + P}" y1="${H - P}" x2="${k * W + W - P}" y2="${H - P}" stroke="#999"/><line x1="${k * W + P}" y1="${P}" x2="${k * W + P}" y2="${H - P}" stroke="#999"/>
      <text x="${k * W + P - 4}" y="${P + 4}" text-anchor="end" font-size="10">${max.toFixed(max < 2 ? 2 : 0)}</text><text x="${k * W + P - 4}" y="${H - P}" text-anchor="end" font-size="10">0</text>
      <text x="${k * W + W / 2}" y="${H - 12}" text-anchor="middle" font-size="10">step</text>${arms}</g>`;
    })
    .join('');
  const legend = ARMS.map(
    (a, i) => `<text x="${10 + i * 200}" y="${H - 4}" font-size="11" fill="${a.color}">— ${a.label}</text>`,
  ).join('');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W * panels.length}" height="${H}" font-family="sans-serif"><rect width="100%" height="100%" fill="white"/>${body}${legend}</svg>`;
}
