import fs from 'node:fs';
import { UserError } from '../contracts/errors.ts';
import {
  CLUSTER_PRESETS,
  type Cluster,
  DEFAULT_CONSTANTS,
  formatBytes,
  formatSeconds,
  type Plan,
  type PlanConstants,
  parseCluster,
  planRun,
  runPhaseLines,
  sessionLine,
  whyBound,
} from '../contracts/plan.ts';
import { CALIBRATION_KEYS, calibrate, measuredSteps, medianStepSeconds } from '../contracts/plan-calibration.ts';
import { REPORT_SIM, type SimResult, simInputFor, simulateStep } from '../contracts/plan-sim.ts';
import { parseRecipe, type Recipe, type RlStage } from '../contracts/recipe.ts';
import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { readSeriesOfKeys } from '../server/store/metrics.ts';
import { getDataset } from '../server/store/datasets.ts';
import { getRecipe, seedDefaultRecipes } from '../server/store/recipes.ts';
import { getRun } from '../server/store/runs.ts';
import { modelExists, resolveModel } from '../server/models/registry.ts';
import { modelSize } from '../workers/train/model-size.ts';
import { parseFlags } from './args.ts';
import type { Command } from './command.ts';

/** `npx toolsmith plan`: what a recipe's RL stages cost on a cluster, before launch (contracts/plan.ts). */
export const planCommand: Command = {
  name: 'plan',
  summary: 'plan a run before launch: step time and what bounds it, tool calls, sandbox cores, GPU-hours, storage',
  usage: `--recipe NAME[@VERSION] | --file recipe.json   --cluster local|h200|report|FILE.json
       [--params N] [--calibrate RUN_ID] [--simulate] [--json]

  --cluster    a preset (local: this machine; h200: one 8 × H200 node; report: 8 × 8 MI300X) or a JSON file
               {nodes, gpusPerNode, gpu: {name, peakTflops, memoryGb} | null, cpuCoresPerNode, sandboxNodes?, ...}
  --params     the model's parameter count when the recipe's model is not registered here (e.g. 14.8e9)
  --calibrate  fit the engine, trainer, sync and length constants on a finished run's RL steps (CPU clusters)
               and show its predicted against measured step time
  --simulate   also simulate one step of each stage (contracts/plan-sim.ts): async against turn-synchronous
               tool dispatch, and the step as the number of sandbox executors changes
  --json       the plan as JSON (stepSeconds, toolCallsPerStep, sandboxCores, gpuHours, storageBytesPerStep, boundBy, …)`,
  async run(args) {
    const f = parseFlags(args, {
      recipe: 'string',
      file: 'string',
      cluster: 'string',
      params: 'string',
      calibrate: 'string',
      simulate: 'boolean',
      json: 'boolean',
    });
    if (Boolean(f.recipe) === Boolean(f.file))
      throw new UserError('plan needs one of --recipe NAME or --file recipe.json');
    const cluster = readCluster(f.cluster as string | undefined);
    const url = config().databaseUrl;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      let recipe: Recipe;
      if (f.file) {
        if (!fs.existsSync(f.file as string))
          throw new UserError(`--file: no such file ${f.file}`, { field: '--file' });
        recipe = parseRecipe(JSON.parse(fs.readFileSync(f.file as string, 'utf8')));
      } else {
        await seedDefaultRecipes(db);
        const [name, v] = String(f.recipe).split('@');
        const stored = await getRecipe(db, { name: name!, version: v ? Number(v) : undefined });
        if (!stored) throw new UserError(`--recipe: no recipe named ${f.recipe}`, { field: '--recipe' });
        recipe = stored.spec;
      }
      const params = await parameterCount(recipe, f.params as string | undefined);
      let constants = DEFAULT_CONSTANTS;
      let measured: { runId: string; stepS: number } | null = null;
      if (f.calibrate) {
        const run = await getRun(db, f.calibrate as string);
        if (!run) throw new UserError(`--calibrate: run ${f.calibrate} not found`, { field: '--calibrate' });
        const runRecipe = parseRecipe(JSON.parse(run.recipeSpec));
        const steps = measuredSteps(runRecipe, await readSeriesOfKeys(db, run.id, [...CALIBRATION_KEYS]));
        if (steps.length === 0)
          throw new UserError(`--calibrate: run ${run.id} has no RL step`, { field: '--calibrate' });
        constants = calibrate(steps, run.id, DEFAULT_CONSTANTS, params);
        measured = { runId: run.id, stepS: medianStepSeconds(steps) };
      }
      const datasetSplits: Record<string, Record<string, number>> = {};
      for (const d of recipe.eval?.datasets ?? [])
        if (d.kind === 'stored') {
          const found = await getDataset(db, { name: d.name, version: d.version });
          if (found) datasetSplits[d.name] = found.splits;
        }
      const plan = planRun(recipe, params, cluster, constants, { datasetSplits });
      const sims = f.simulate ? simulateStages(recipe, params, cluster, constants) : null;
      if (f.json) console.log(JSON.stringify(sims ? { ...plan, simulation: sims } : plan, null, 2));
      else console.log(formatPlan(plan, measured) + (sims ? `\n\n${formatSimulation(sims)}` : ''));
      return 0;
    } finally {
      await db.close();
    }
  },
};

interface StageSimulation {
  stage: string;
  async: SimResult;
  turnSync: SimResult;
  /** The async step with this many executors in all. */
  executors: { executors: number; result: SimResult }[];
}

function simulateStages(recipe: Recipe, params: number, cluster: Cluster, constants: PlanConstants): StageSimulation[] {
  return recipe.stages
    .filter((s): s is RlStage => s.type === 'rl')
    .map((stage) => {
      const input = (d: 'async' | 'turn_sync') => simInputFor(stage, params, cluster, constants, REPORT_SIM, d);
      const base = input('async');
      return {
        stage: stage.name,
        async: simulateStep(base),
        turnSync: simulateStep(input('turn_sync')),
        executors: [...new Set([2, 4, 8, 32, 128, base.executors])].map((executors) => ({
          executors,
          result: simulateStep({ ...base, executors }),
        })),
      };
    });
}

function formatSimulation(sims: StageSimulation[]): string {
  const lines = ['simulated step (rollout phase; one seed):', ''];
  lines.push('| stage | dispatch | step | engine idle | tool calls | mean tool latency |', '|---|---|--:|--:|--:|--:|');
  for (const s of sims)
    for (const [name, r] of [
      ['async', s.async],
      ['turn-synchronous', s.turnSync],
    ] as const)
      lines.push(
        `| ${s.stage} | ${name} | ${secs(r.stepS)} | ${(100 * r.engineIdleShare).toFixed(1)}% | ${int(r.toolCalls)} | ${secs(r.meanToolLatencyS)} |`,
      );
  lines.push('', '| stage | sandbox executors | step | engine idle | mean tool latency |', '|---|--:|--:|--:|--:|');
  for (const s of sims)
    for (const e of s.executors)
      lines.push(
        `| ${s.stage} | ${int(e.executors)} | ${secs(e.result.stepS)} | ${(100 * e.result.engineIdleShare).toFixed(1)}% | ${secs(e.result.meanToolLatencyS)} |`,
      );
  lines.push(
    '',
    'the step by sandbox executors (async dispatch), and turn-synchronous dispatch with the whole fleet (░: engines idle):',
  );
  for (const s of sims) {
    const rows: [string, SimResult][] = [
      ...s.executors.map((e): [string, SimResult] => [`${int(e.executors)} executors`, e.result]),
      ['turn-synchronous', s.turnSync],
    ];
    const longest = Math.max(...rows.map(([, r]) => r.stepS));
    lines.push(`${s.stage}:`);
    for (const [label, r] of rows)
      lines.push(`  ${label.padStart(16)} ${bar(r.stepS, longest, r.engineIdleShare)} ${secs(r.stepS)}`);
  }
  return lines.join('\n');
}

/** A bar of up to `width` cells for `value` against `longest`, the engines' idle share of it drawn light. */
export function bar(value: number, longest: number, idleShare: number, width = 40): string {
  const cells = longest > 0 ? Math.max(1, Math.round((value / longest) * width)) : 0;
  const idle = Math.min(cells, Math.round(cells * Math.max(0, idleShare)));
  return '█'.repeat(cells - idle) + '░'.repeat(idle);
}

function readCluster(value: string | undefined): Cluster {
  if (!value)
    throw new UserError('--cluster: name a preset (local, h200, report) or a JSON file', { field: '--cluster' });
  if (value in CLUSTER_PRESETS) return parseCluster(CLUSTER_PRESETS[value as keyof typeof CLUSTER_PRESETS]);
  if (!fs.existsSync(value))
    throw new UserError(`--cluster: "${value}" is neither a preset (local, h200, report) nor a file`, {
      field: '--cluster',
    });
  try {
    return parseCluster(JSON.parse(fs.readFileSync(value, 'utf8')));
  } catch (e) {
    throw new UserError(`--cluster: ${value}: ${(e as Error).message}`, { field: '--cluster' });
  }
}

async function parameterCount(recipe: Recipe, given: string | undefined): Promise<number> {
  if (given !== undefined) {
    const n = Number(given);
    if (!Number.isFinite(n) || n < 1)
      throw new UserError(`--params: a positive number, not "${given}"`, { field: '--params' });
    return n;
  }
  const dir = recipe.model.kind === 'model' && modelExists(recipe.model.name) ? resolveModel(recipe.model.name) : null;
  const size = await modelSize(recipe, dir);
  if (!size)
    throw new UserError(
      `--params: the recipe's model${recipe.model.kind === 'model' ? ` "${recipe.model.name}"` : ''} is not registered here; give its parameter count`,
      { field: '--params' },
    );
  return size.params;
}

const secs = formatSeconds;
const bytes = formatBytes;
const int = (x: number) => Math.round(x).toLocaleString('en-US');

/** The plan as the CLI prints it: per stage, the totals, and every assumption with its source. */
export function formatPlan(p: Plan, measured: { runId: string; stepS: number } | null = null): string {
  const c = p.cluster;
  const lines = [
    `cluster ${c.name}: ${c.nodes} node(s) × ${c.gpusPerNode} ${c.gpu?.name ?? 'GPU'}${c.gpu ? ` (${c.gpu.peakTflops} TFLOP/s, ${c.gpu.memoryGb} GB)` : ''}, ${c.cpuCoresPerNode} cores/node${c.sandboxNodes ? `, ${c.sandboxNodes} sandbox node(s)` : ''}; model ${(p.params / 1e9).toFixed(p.params < 1e8 ? 4 : 1)}B parameters`,
    '',
    '| stage | steps | trajectories | tool calls | rollout | train | sync | step | bound by | sandbox cores | tool latency | storage/step |',
    '|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|--:|',
    ...p.stages.map(
      (s) =>
        `| ${s.name} | ${s.steps} | ${int(s.trajectories)} | ${int(s.toolCalls)} | ${secs(s.rolloutS)} | ${secs(s.trainS)} | ${secs(s.syncS)} | **${secs(s.stepS)}** | ${s.boundBy} | ${int(s.sandboxCores)} | ${secs(s.toolLatencyS)} | ${bytes(s.storageBytes)} |`,
    ),
    '',
    ...p.stages.map(whyBound),
    ...p.stages.flatMap((s) => sessionLine(s) ?? []),
    '',
    ...runPhaseLines(p),
    '',
    `step ${secs(p.stepSeconds)} (bound by ${p.boundBy}); ${int(p.steps)} RL steps; the run ${secs(p.runSeconds)}; ${p.gpuHours.toFixed(0)} GPU-hours; ${int(p.toolCallsPerStep)} tool calls and ${bytes(p.storageBytesPerStep)} stored per step, ${bytes(p.storageBytes)} and ${int(p.dbRows)} database rows in all${p.trainMemoryGbPerGpu !== null ? `; training state ${p.trainMemoryGbPerGpu.toFixed(1)} GB per GPU (16 B/parameter, sharded)` : ''}`,
  ];
  if (measured)
    lines.push(
      `calibrated on run ${measured.runId}: its median step ${secs(measured.stepS)}, predicted ${secs(p.stepSeconds)} (${(100 * (p.stepSeconds / measured.stepS - 1)).toFixed(1)}%)`,
    );
  lines.push('', 'assumptions:');
  for (const [name, k] of Object.entries(p.constants))
    lines.push(
      `  ${name.padEnd(24)} ${String(Number(k.value.toPrecision(4))).padStart(10)}  ${k.source.kind}: ${k.source.detail}`,
    );
  return lines.join('\n');
}
