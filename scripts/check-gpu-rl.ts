/**
 * `npm run check:gpu-rl` (docs/benchmarks.md "npm run check:gpu-rl"): the built-in recipe `smollm2-arith-tool` — its
 * SFT and its RL stage, each with the evaluation on the 348 held-out problems — on one GPU: the trainer on cuda and the
 * embedded engine on onnxruntime's CUDA provider, through `npx toolsmith train` as a researcher runs it, within 10
 * minutes. Then one JSON line on stdout: each stage's wall time, pass@1 with its interval, tool-call rate, tool errors
 * and length; the RL stage's rollout tokens/s and mean step time; the paired difference; whether it kept to the limit.
 *
 * Where a piece is missing it refuses before training, exit 2, naming it: no GPU that torch sees, onnxruntime-node
 * without its CUDA provider, the model or the dataset not fetched. `--cpu-smoke` runs the same path on the CPU with
 * the embedded micro recipe (what tests/integration/gpu-rl-check.test.ts does); `--timeout-s` changes the limit.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { RecipeInput } from '../contracts/recipe.ts';
import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { MICRO_INPUT, SMOLLM2_ARITH_TOOL_INPUT } from '../server/recipes/defaults.ts';
import { designerPreflight } from '../server/recipes/preflight.ts';
import { readSeriesOfKeys } from '../server/store/metrics.ts';
import { type RunReport, runReport } from '../server/store/run-report.ts';
import { engineDeviceProblem } from '../workers/engines/engine-device.ts';
import { gpuMemory } from '../workers/handlers/gpu-memory.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const REFUSED = 2;

/** The recipe the check trains: the built-in one moved onto the GPU, or the micro recipe on the CPU for a smoke run. */
function checkRecipe(smoke: boolean): RecipeInput {
  if (smoke) {
    // The path, not the figures: 4 SFT steps (16 demonstrations of 4) before the micro recipe's 2 RL steps.
    const [sft, rl] = MICRO_INPUT.stages;
    const shortSft = { ...sft, data: { ...sft.data, n: 16 }, epochs: 1 };
    return { ...MICRO_INPUT, name: 'micro-gpu-rl-check', trainer: { device: 'cpu' }, stages: [shortSft, rl] };
  }
  const r = SMOLLM2_ARITH_TOOL_INPUT;
  return {
    ...r,
    name: `${r.name}-gpu-check`,
    trainer: { ...r.trainer, device: 'cuda' },
    // float32 on the GPU: nothing there is bound by reading the weights, and the trainer's log-probs match exactly.
    engine: { kind: 'embedded', weights: 'float32', device: 'cuda' },
  };
}

/** Missing pieces, all of them, each with what to do; empty when the check can train. */
async function refusals(smoke: boolean): Promise<string[]> {
  if (smoke) return [];
  const out: string[] = [];
  const gpus = await gpuMemory('cuda');
  if (gpus.length === 0)
    out.push(
      "no CUDA GPU: the trainer's torch sees none (torch.cuda.is_available() is False). On this machine run the recipe on the CPU instead: npx toolsmith train --recipe smollm2-arith-tool",
    );
  else {
    const engine = engineDeviceProblem('cuda', gpus.length);
    if (engine) out.push(engine);
  }
  // The model and datasets as the worker's preflight sees them (the recipe designer's check), each with its fix.
  const url = config().databaseUrl;
  await migrate(url);
  const db = await openDatabase(url);
  try {
    for (const issue of await designerPreflight(db, checkRecipe(false))) out.push(issue.message);
  } finally {
    await db.close();
  }
  return out;
}

/** `npx toolsmith train --file` on the recipe; resolves with its run id once it ends or `limitS` passes (then stopped). */
function train(
  recipe: RecipeInput,
  limitS: number,
): Promise<{ runId: string | null; code: number | null; timedOut: boolean }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-gpu-rl-'));
  const file = path.join(dir, 'recipe.json');
  fs.writeFileSync(file, JSON.stringify(recipe));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/toolsmith.mjs'), 'train', '--file', file], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    let timedOut = false;
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      process.stderr.write(d); // the run's progress, off the JSON line's stdout
    });
    // SIGINT is the CLI's Ctrl-C: it stops the run where it can be resumed and exits.
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGINT');
    }, limitS * 1000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      fs.rmSync(dir, { recursive: true, force: true });
      resolve({ runId: /training run (\S+)/.exec(out)?.[1] ?? null, code, timedOut });
    });
  });
}

const round = (x: number | null | undefined, d = 3) => (x == null ? null : Number(x.toFixed(d)));

/** The JSON line: the report's figures per stage, the RL stages' mean step time. Pure. */
function checkSummary(
  report: RunReport,
  stepTimes: { step: number; value: number }[],
  limitS: number,
): Record<string, unknown> {
  const stages = report.stages.map((s, i) => {
    const e = s.evals[0];
    const next = report.stages[i + 1]?.startStep ?? Number.POSITIVE_INFINITY;
    const times = stepTimes.filter((p) => p.step > s.startStep && p.step <= next).map((p) => p.value);
    return {
      name: s.name,
      type: s.type,
      steps: s.endStep === null ? null : s.endStep - s.startStep,
      wallS: round(s.wallS, 1),
      pass1: round(e?.pass1),
      pass1Ci: e?.pass1Ci ? [round(e.pass1Ci.lo), round(e.pass1Ci.hi)] : null,
      toolCallRate: e?.noToolCallRate === undefined ? null : round(1 - e.noToolCallRate),
      toolErrorRate: round(e?.toolErrorRate),
      meanLength: round(e?.meanLength, 1),
      ...(s.type === 'rl'
        ? {
            rolloutTokensPerS: round(s.groups?.rolloutTokensPerS ?? null, 1),
            meanStepS: times.length ? round(times.reduce((a, b) => a + b, 0) / times.length, 2) : null,
          }
        : {}),
    };
  });
  const p = report.paired[0]?.paired;
  return {
    runId: report.runId,
    status: report.status,
    wallS: round(report.wallS, 1),
    limitS,
    withinLimit: report.wallS !== null && report.wallS <= limitS,
    stages,
    paired: p ? { diff: round(p.diff), ci: [round(p.ci.lo), round(p.ci.hi)] } : null,
  };
}

async function main(): Promise<number> {
  process.umask(0o077); // as bin/toolsmith.mjs: the database this may create is its user's alone
  const { values } = parseArgs({ options: { 'cpu-smoke': { type: 'boolean' }, 'timeout-s': { type: 'string' } } });
  const smoke = values['cpu-smoke'] === true;
  const limitS = Number(values['timeout-s'] ?? 600);
  if (!(limitS > 0)) {
    console.error(`[check:gpu-rl] --timeout-s: expected seconds > 0, not ${values['timeout-s']}`);
    return REFUSED;
  }
  const missing = await refusals(smoke);
  if (missing.length) {
    for (const m of missing) console.error(`[check:gpu-rl] refused: ${m}`);
    return REFUSED;
  }
  const { runId, code, timedOut } = await train(checkRecipe(smoke), limitS);
  const head = { check: 'gpu-rl', device: smoke ? 'cpu' : 'cuda', timedOut };
  if (!runId) {
    // Stopped before the CLI had named its run (a limit shorter than its start-up), or it failed to launch.
    if (timedOut) console.log(JSON.stringify({ ...head, runId: null, status: null, limitS, withinLimit: false }));
    else console.error(`[check:gpu-rl] the training run did not start (exit ${code})`);
    return 1;
  }
  const db = await openDatabase(config().databaseUrl);
  try {
    const series = await readSeriesOfKeys(db, runId, ['time/step']);
    const summary = checkSummary(await runReport(db, runId), series['time/step'] ?? [], limitS);
    console.log(JSON.stringify({ ...head, ...summary }));
    return code === 0 && !timedOut && summary.withinLimit ? 0 : 1;
  } finally {
    await db.close();
  }
}

process.exitCode = await main();
