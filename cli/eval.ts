import { setMaxListeners } from 'node:events';
import type { Command } from './command.ts';
import { parseFlags } from './args.ts';
import { config } from '../server/config.ts';
import { type Database, openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { UserError, errorMessage } from '../contracts/errors.ts';
import { launchEval } from '../server/lifecycle.ts';
import { appendEvent } from '../server/store/events.ts';
import { followRun } from './follow.ts';
import { logMetrics } from '../server/store/metrics.ts';
import { setRunStatus } from '../server/store/runs.ts';
import { withdrawJob } from '../server/store/jobs.ts';
import type { EvalComparison } from '../server/store/eval-compare.ts';
import { formatDifference, formatWithInterval } from '../contracts/intervals.ts';
import { alignedTable } from '../workers/eval/run.ts';

type Flags = ReturnType<typeof parseFlags>;
type EvalSpec = Awaited<ReturnType<typeof launchEval>>['spec'];

/** `npx toolsmith eval`: pass@1 over k samples of an engine on stored datasets; prints the table. */
export const evalCommand: Command = {
  name: 'eval',
  summary:
    'evaluate a checkpoint or an OpenAI-compatible server on datasets: pass@1 (k samples), pass@k, length, tool use',
  usage: `(--checkpoint DIR | --url URL[,URL] --model NAME [--tokenizer FILE]) --dataset NAME[,NAME] [options]
       --compare RUN[@STEP],RUN[@STEP]

  --checkpoint DIR     an embedded model export dir (model.onnx, tokenizer.json, config.json)
  --url, --model       OpenAI-compatible /v1/completions servers (vLLM, SGLang, toolsmith serve-model)
  --dataset            stored dataset names (npx toolsmith dataset list), each optionally name@version
  --split all|train|test   (default all)      --limit N   at most N problems per dataset
  --pick first|spread  with --limit: the first N (default) or N spread evenly over the split
  --k N (16)  --temperature T (0.6)  --top-p P (1)  --max-tokens N (30000)  --max-turns N (30)  --seed S (0)
  --template full|compact|minimal (the recipe's template variants; default: minimal for --checkpoint, full for --url)
  --queue              let a running worker do it and stream its progress here
  --compare A,B        paired comparison of two stored evaluations on the same problems (two runs, or one run at
                       two steps, e.g. run_x@0,run_x@40; default step: the latest evaluated): pass@1 of each and the
                       difference B − A with its 95% interval (bootstrap over problems)
Every trajectory is stored (split "eval") and the results appear on the run's page, pass@1 and pass@k with 95%
intervals (bootstrap over problems).`,
  async run(args) {
    const f = parseFlags(args, {
      checkpoint: 'string',
      url: 'string',
      model: 'string',
      tokenizer: 'string',
      dataset: 'string',
      split: 'string',
      limit: 'number',
      pick: 'string',
      k: 'number',
      temperature: 'number',
      'top-p': 'number',
      'max-tokens': 'number',
      'max-turns': 'number',
      seed: 'number',
      template: 'string',
      queue: 'boolean',
      name: 'string',
      compare: 'string',
    });
    if (f.compare !== undefined) return compareEvals(String(f.compare));
    if (!f.checkpoint === !f.url) throw new UserError('eval needs exactly one of --checkpoint DIR or --url URL');
    if (!f.dataset) throw new UserError('eval needs --dataset NAME');
    const input = evalInput(f);
    const url = config().databaseUrl;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      const { runId, jobId, spec } = await launchEval(db, input as never, f.name as string | undefined);
      if (f.queue) {
        console.log(`queued eval run ${runId}; waiting for a worker…`);
        return await followRun(db, runId);
      }
      return await runInProcess(db, runId, jobId, spec);
    } finally {
      await db.close();
    }
  },
};

/** The launch input of `npx toolsmith eval`'s flags (checked by launchEval). */
function evalInput(f: Flags) {
  const engine = f.checkpoint
    ? { kind: 'embedded' as const, checkpoint: f.checkpoint as string }
    : {
        kind: 'openai' as const,
        urls: String(f.url).split(','),
        model: (f.model as string) ?? '',
        tokenizer: f.tokenizer as string | undefined,
      };
  return {
    engine,
    datasets: String(f.dataset).split(',').filter(Boolean),
    split: f.split,
    limit: f.limit,
    pick: f.pick,
    k: f.k,
    temperature: f.temperature,
    topP: f['top-p'],
    maxTokens: f['max-tokens'],
    maxTurns: f['max-turns'],
    seed: f.seed,
    template: f.template,
  };
}

/** Runs the eval job in this process (the job withdrawn from the queue first); Ctrl-C cancels it. */
async function runInProcess(db: Database, runId: string, jobId: string, spec: EvalSpec): Promise<number> {
  // Take the job ourselves so no worker also runs it.
  await withdrawJob(db, jobId, 'run in-process by npx toolsmith eval');
  await setRunStatus(db, runId, 'running', { message: 'npx toolsmith eval (in process)' });
  const [{ createEngine }, { createSandbox }, { verifierFromSettings }, { runEvaluation, formatEvalTable }] =
    await Promise.all([
      import('../workers/engines/create.ts'),
      import('../workers/sandbox/index.ts'),
      import('../workers/handlers/verifier.ts'),
      import('../workers/eval/run.ts'),
    ]);
  const eng = await createEngine(spec.engine);
  const sandbox = await createSandbox();
  const verifier = verifierFromSettings(undefined, sandbox);
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every in-flight generation and tool call listens for Ctrl-C
  const onSig = () => stop.abort();
  process.once('SIGINT', onSig);
  try {
    console.log(`eval run ${runId}`);
    const rows = await runEvaluation(
      {
        db,
        engine: eng,
        sandbox,
        verifier,
        runId,
        signal: stop.signal,
        log: async (m) => {
          console.log(m);
          await appendEvent(db, runId, { message: m });
        },
        metrics: (s, v) => logMetrics(db, runId, s, v),
      },
      spec,
    );
    const table = formatEvalTable(rows);
    console.log(`\n${table}`);
    await appendEvent(db, runId, { message: `\n${table}`, type: 'eval_table', data: rows });
    await setRunStatus(db, runId, 'succeeded');
    return 0;
  } catch (e) {
    await setRunStatus(db, runId, stop.signal.aborted ? 'cancelled' : 'failed', { error: errorMessage(e) });
    throw e;
  } finally {
    process.off('SIGINT', onSig);
    await verifier.close();
    await sandbox.close();
    await eng.close();
  }
}

/** `--compare A,B`: the paired comparison, printed as a table. */
async function compareEvals(arg: string): Promise<number> {
  const sides = arg.split(',').map((s) => s.trim());
  const parse = (s: string) => {
    const m = /^([^@\s]+)(?:@(\d+))?$/.exec(s);
    if (!m) throw new UserError(`--compare: "${s}" is not RUN or RUN@STEP`);
    return { runId: m[1]!, step: m[2] === undefined ? undefined : Number(m[2]) };
  };
  if (sides.length !== 2) throw new UserError('--compare needs two evaluations: A,B (each RUN or RUN@STEP)');
  const [a, b] = sides.map(parse) as [ReturnType<typeof parse>, ReturnType<typeof parse>];
  const url = config().databaseUrl;
  await migrate(url);
  const db = await openDatabase(url);
  try {
    const { getRun } = await import('../server/store/runs.ts');
    for (const s of [a, b]) if (!(await getRun(db, s.runId))) throw new UserError(`--compare: no run ${s.runId}`);
    const { pairedEvalComparison } = await import('../server/store/eval-compare.ts');
    const c = await pairedEvalComparison(db, a, b);
    console.log(formatComparison(c));
    return c.benchmarks.length ? 0 : 1;
  } finally {
    await db.close();
  }
}

export function formatComparison(c: EvalComparison): string {
  const name = (s: { runId: string; step: number | null }) => `${s.runId}@${s.step ?? '-'}`;
  if (!c.benchmarks.length) return `no benchmark evaluated in both ${name(c.a)} and ${name(c.b)}`;
  const head = ['benchmark', 'problems', `A ${name(c.a)}`, `B ${name(c.b)}`, 'B − A [95% CI]', ''];
  const body = c.benchmarks.map((r) => [
    r.benchmark,
    String(r.paired?.problems ?? '-'),
    formatWithInterval(r.a.pass1, r.a.ci),
    formatWithInterval(r.b.pass1, r.b.ci),
    r.paired ? formatDifference(r.paired) : '-',
    r.paired ? (r.paired.excludesZero ? 'interval excludes 0' : 'interval includes 0') : (r.why ?? ''),
  ]);
  return alignedTable(head, body, [0, 5])
    .map((l) => l.trimEnd())
    .join('\n');
}
