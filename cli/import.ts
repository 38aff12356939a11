import fs from 'node:fs';
import { UserError } from '../contracts/errors.ts';
import { FOREIGN_FORMATS } from '../contracts/foreign.ts';
import { parseRewardWeights } from '../contracts/reward-weights.ts';
import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { launchImport } from '../server/imports/launch.ts';
import { cancelRun } from '../server/lifecycle.ts';
import { runExists, setRunStatus } from '../server/store/runs.ts';
import { codeVersion } from '../server/version.ts';
import { exportRunAtif, writeNewFile } from '../workers/imports/export.ts';
import { readStepTimeline } from '../server/store/step-timeline.ts';
import { toPerfettoTrace } from '../contracts/perfetto-trace.ts';
import {
  DEFAULT_TRACKER_PROJECT,
  TRACKER_PROJECT,
  TRACKER_TARGETS,
  type TrackerTarget,
} from '../contracts/tracker-export.ts';
import { exportRunToTracker, type TrackerOptions } from '../workers/imports/export-tracker.ts';
import type { Database } from '../server/db/client.ts';
import { importPass } from '../workers/imports/importer.ts';
import { parseFlags } from './args.ts';
import type { Command } from './command.ts';

const USAGE = `PATH [--format ${FOREIGN_FORMATS.join('|')}] [--name N] [--follow] [--weights name=w,…] [--framework-version V]

  Reads the rollouts another framework wrote to PATH into a read-only run every view opens (docs/importing-runs.md). The format is detected from the folder's layout unless named. Without --follow the folder is
  read once, here. With --follow a worker tails it (new steps and appended lines within seconds, from the byte
  offsets stored per file, across restarts) until the run is cancelled. --weights: TRL's reward_weights (the
  trajectory's reward is the weighted sum of the reward columns; 1 each unless given).

  import stop RUN   stop following an imported run (what it read stays).`;

export const importCommand: Command = {
  name: 'import',
  summary: 'open a run trained elsewhere (prime-rl, verl, NeMo-RL, TRL, ART, rLLM, ATIF): read it once, or follow it',
  usage: USAGE,
  async run(args) {
    if (args[0] === 'stop') return stopFollowing(args[1]);
    const path = args[0] !== undefined && !args[0].startsWith('--') ? args[0] : undefined;
    if (!path)
      throw new UserError('import needs the folder the run writes to', { fix: `npx toolsmith import ${USAGE}` });
    const f = parseFlags(args.slice(1), {
      format: 'string',
      name: 'string',
      follow: 'boolean',
      weights: 'string',
      'framework-version': 'string',
    });
    const url = config().databaseUrl;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      const follow = f.follow === true;
      const weights = typeof f.weights === 'string' ? parseRewardWeights(f.weights, '--weights') : undefined;
      // The operator's shell may name any folder it reads: no import roots here (they bind the web app and the API).
      const req = {
        path,
        ...(typeof f.format === 'string' ? { format: f.format } : {}),
        ...(typeof f.name === 'string' ? { name: f.name } : {}),
        ...(typeof f['framework-version'] === 'string' ? { frameworkVersion: f['framework-version'] } : {}),
        ...(weights ? { weights } : {}),
        follow,
      };
      if (follow) {
        const queued = await launchImport(db, req, { roots: null, enqueue: true });
        console.log(
          `a worker follows ${queued.format ?? 'the'} rollouts in ${queued.folder} (run ${queued.runId}, job ${queued.jobId}); open /runs/${queued.runId} — stop with: npx toolsmith import stop ${queued.runId}`,
        );
        return 0;
      }
      const launched = await launchImport(db, req, { roots: null, enqueue: false });
      console.log(`${launched.format} run in ${launched.folder}: run ${launched.runId}`);
      const r = await importPass({
        db,
        runId: launched.runId,
        folder: launched.folder,
        format: launched.format,
        ...(weights ? { weights } : {}),
      });
      await setRunStatus(db, launched.runId, 'succeeded', {
        message: `imported ${r.trajectories} trajectories from ${r.lines} records`,
      });
      console.log(`imported ${r.trajectories} trajectories from ${r.lines} records in ${launched.files.length} files`);
      if (r.problemCount) {
        console.log(`${r.problemCount} malformed record(s) skipped:`);
        for (const p of r.problems.slice(0, 20)) console.log(`  ${p.file}${p.line ? `:${p.line}` : ''}: ${p.reason}`);
        if (r.problemCount > 20) console.log(`  … and ${r.problemCount - 20} more (the run's log lists the first 50)`);
      }
      return 0;
    } finally {
      await db.close();
    }
  },
};

async function stopFollowing(runId: string | undefined) {
  if (!runId) throw new UserError('import stop needs the run id', { field: 'RUN' });
  const url = config().databaseUrl;
  await migrate(url);
  const db = await openDatabase(url);
  try {
    const r = await cancelRun(db, runId);
    console.log(`run ${runId}: ${r.status}`);
    return 0;
  } finally {
    await db.close();
  }
}

export const exportCommand: Command = {
  name: 'export',
  summary:
    "write a run's trajectories as ATIF v1.4, a step's timeline as a Perfetto trace, or the run into Trackio or MLflow",
  usage: `RUN --format atif --out DIR | RUN --format perfetto --step N --out FILE
       RUN --to trackio [--project P] [--dir DIR] | RUN --to mlflow --tracking-uri URI [--project P]

  atif: one DIR/<trajectory id>.trajectory.json per trajectory (Harbor's Agent Trajectory Interchange Format v1.4);
  Toolsmith's own fields (step, split, group, rewards, the whole token record) ride under "extra", so
  \`npx toolsmith import DIR\` gives back the same trajectories.
  perfetto: step N's timeline (a track per trajectory with its generation turns and tool calls, then reward, RoC,
  training, weight sync and storage) as Chrome trace-event JSON, which ui.perfetto.dev opens; FILE must not exist.
  --to trackio: the run into Trackio's local store (TRACKIO_DIR, or --dir) in project P (default "toolsmith"), named
  by its run id and grouped by its name: the recipe as config, every metric by step, each trajectory as a trace
  (messages, a span per turn and per tool call) under trajectories/<split>. \`trackio show --project P\` opens it.
  --to mlflow: the run into the MLflow tracking server at URI, in experiment P (default "toolsmith", created when
  missing): the recipe as parameters (and toolsmith/config.json), every metric by step, each trajectory as a trace
  linked to the run (a span per turn and per tool call).`,
  async run(args) {
    const runId = args[0] !== undefined && !args[0].startsWith('--') ? args[0] : undefined;
    if (!runId) throw new UserError('export needs a run id', { field: 'RUN' });
    const f = parseFlags(args.slice(1), {
      format: 'string',
      out: 'string',
      step: 'number',
      to: 'string',
      project: 'string',
      dir: 'string',
      'tracking-uri': 'string',
    });
    const target = f.to === undefined ? null : trackerTarget(f);
    if (!target) checkFileExport(f);
    const url = config().databaseUrl;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      if (!(await runExists(db, runId))) throw new UserError(`run ${runId} not found`, { field: 'RUN' });
      if (target) return await exportTracker(db, runId, target);
      if (f.format === 'perfetto') return await exportPerfetto(db, runId, f.step as number, f.out as string);
      const r = await exportRunAtif(db, runId, f.out as string, { name: 'toolsmith', version: codeVersion() });
      console.log(`wrote ${r.trajectories} ATIF v1.4 trajectories to ${f.out}`);
      return 0;
    } finally {
      await db.close();
    }
  },
};

type ExportFlags = Record<string, string | number | boolean | undefined>;

/** --to's tracker and its options, each bad one named. */
function trackerTarget(f: ExportFlags): { to: TrackerTarget } & TrackerOptions {
  if (!(TRACKER_TARGETS as readonly unknown[]).includes(f.to))
    throw new UserError(`--to: one of ${TRACKER_TARGETS.join(', ')} (got "${String(f.to)}")`, { field: '--to' });
  const to = f.to as TrackerTarget;
  if (f.format !== undefined || f.out !== undefined || f.step !== undefined)
    throw new UserError('--to writes into a tracker: drop --format, --out and --step', { field: '--to' });
  const project = f.project === undefined ? DEFAULT_TRACKER_PROJECT : f.project;
  if (typeof project !== 'string' || !TRACKER_PROJECT.test(project))
    throw new UserError('--project: letters, digits, ".", "_" and "-", starting with a letter or digit (100 at most)', {
      field: '--project',
    });
  if (to === 'trackio') {
    if (f['tracking-uri'] !== undefined)
      throw new UserError('--tracking-uri is for --to mlflow; Trackio writes to a folder (--dir)', {
        field: '--tracking-uri',
      });
    if (f.dir !== undefined && (typeof f.dir !== 'string' || !f.dir))
      throw new UserError("--dir: the folder of Trackio's store", { field: '--dir' });
    return { to, project, ...(typeof f.dir === 'string' ? { dir: f.dir } : {}) };
  }
  if (f.dir !== undefined)
    throw new UserError('--dir is for --to trackio; MLflow is a server (--tracking-uri)', { field: '--dir' });
  const uri = f['tracking-uri'];
  if (typeof uri !== 'string' || !/^https?:\/\/[^\s/]+/.test(uri))
    throw new UserError('--tracking-uri: the MLflow server, http://HOST:PORT or https://…', {
      field: '--tracking-uri',
    });
  if (/^https?:\/\/[^/]*@/.test(uri))
    throw new UserError('--tracking-uri: no credentials in the URI (the command line is visible to every user)', {
      field: '--tracking-uri',
      fix: "set MLFLOW_TRACKING_USERNAME and MLFLOW_TRACKING_PASSWORD, or MLFLOW_TRACKING_TOKEN: MLflow's client reads them",
    });
  return { to, project, trackingUri: uri };
}

function checkFileExport(f: ExportFlags) {
  if (f.format !== 'atif' && f.format !== 'perfetto')
    throw new UserError('--format: atif (trajectories) or perfetto (a step timeline); or --to trackio', {
      field: '--format',
    });
  if (typeof f.out !== 'string' || !f.out)
    throw new UserError(`--out: name the ${f.format === 'atif' ? 'folder' : 'file'} to write`, { field: '--out' });
  const step = f.step;
  if (f.format === 'perfetto' && (typeof step !== 'number' || !Number.isInteger(step) || step < 0))
    throw new UserError('--step: the step to export, a whole number', { field: '--step' });
}

async function exportTracker(db: Database, runId: string, target: { to: TrackerTarget } & TrackerOptions) {
  const r = await exportRunToTracker(db, runId, target.to, target);
  const open = target.to === 'trackio' ? `open it with: trackio show --project ${r.project}` : `open it at ${r.where}`;
  console.log(
    `wrote run ${runId} into ${target.to === 'trackio' ? 'Trackio' : 'MLflow'} project ${r.project} (${target.to === 'trackio' ? r.where : `run ${r.run}`}): ${r.metrics} metric values, ${r.traces} trajectories as traces; ${open}`,
  );
  return 0;
}

/** One step's timeline as trace-event JSON (contracts/perfetto-trace.ts), written whole to a new file. */
async function exportPerfetto(db: Database, runId: string, step: number, out: string): Promise<number> {
  const t = await readStepTimeline(db, runId, step);
  if (t.blocks.length === 0)
    throw new UserError(`--step: run ${runId} recorded no times at step ${step}`, { field: '--step' });
  if (fs.existsSync(out)) throw new UserError(`--out: ${out} exists; not replaced`, { field: '--out' });
  writeNewFile(out, JSON.stringify(toPerfettoTrace(t, `toolsmith ${codeVersion()}`)));
  const slices = t.blocks.length;
  console.log(
    `wrote ${out}: step ${step}, ${t.lanes.length} tracks, ${slices} slices${t.phasesRecorded ? '' : ' (no phase times recorded)'}; open it at https://ui.perfetto.dev`,
  );
  return 0;
}
