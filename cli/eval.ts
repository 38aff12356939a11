import { setMaxListeners } from 'node:events';
import type { Command } from './commands.ts';
import { parseFlags } from './args.ts';
import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { migrate } from '../server/db/migrate.ts';
import { UserError, errorMessage } from '../contracts/errors.ts';
import { launchEval } from '../server/lifecycle.ts';
import { appendEvent } from '../server/store/events.ts';
import { followRun } from './follow.ts';
import { logMetrics } from '../server/store/metrics.ts';
import { setRunStatus } from '../server/store/runs.ts';
import { withdrawJob } from '../server/store/jobs.ts';

/** `npx toolsmith eval`: pass@1 over k samples of an engine on stored datasets; prints the table. */
export const evalCommand: Command = {
  name: 'eval',
  summary: 'evaluate a checkpoint or an OpenAI-compatible server on datasets: pass@1 (k samples), pass@k, length, tool use',
  usage: `(--checkpoint DIR | --url URL[,URL] --model NAME [--tokenizer FILE]) --dataset NAME[,NAME] [options]

  --checkpoint DIR     an embedded model export dir (model.onnx, tokenizer.json, config.json)
  --url, --model       OpenAI-compatible /v1/completions servers (vLLM, SGLang, toolsmith serve-model)
  --dataset            stored dataset names (npx toolsmith dataset list), each optionally name@version
  --split all|train|test   (default all)      --limit N   at most N problems per dataset
  --k N (16)  --temperature T (0.6)  --top-p P (1)  --max-tokens N (30000)  --max-turns N (30)  --seed S (0)
  --template full|compact|minimal (the recipe's template variants; default: minimal for --checkpoint, full for --url)
  --queue              let a running worker do it and stream its progress here
Every trajectory is stored (split "eval") and the results appear on the run's page.`,
  async run(args) {
    const f = parseFlags(args, {
      checkpoint: 'string', url: 'string', model: 'string', tokenizer: 'string', dataset: 'string', split: 'string', limit: 'number',
      k: 'number', temperature: 'number', 'top-p': 'number', 'max-tokens': 'number', 'max-turns': 'number', seed: 'number',
      template: 'string', queue: 'boolean', name: 'string',
    });
    if (!f.checkpoint === !f.url) throw new UserError('eval needs exactly one of --checkpoint DIR or --url URL');
    if (!f.dataset) throw new UserError('eval needs --dataset NAME');
    const engine = f.checkpoint
      ? { kind: 'embedded' as const, checkpoint: f.checkpoint as string }
      : { kind: 'openai' as const, urls: String(f.url).split(','), model: (f.model as string) ?? '', tokenizer: f.tokenizer as string | undefined };
    const input = {
      engine, datasets: String(f.dataset).split(',').filter(Boolean), split: f.split, limit: f.limit, k: f.k, temperature: f.temperature,
      topP: f['top-p'], maxTokens: f['max-tokens'], maxTurns: f['max-turns'], seed: f.seed, template: f.template,
    };
    const url = config().databaseUrl;
    await migrate(url);
    const db = await openDatabase(url);
    try {
      const { runId, jobId, spec } = await launchEval(db, input as never, f.name as string | undefined);
      if (f.queue) {
        console.log(`queued eval run ${runId}; waiting for a worker…`);
        return await followRun(db, runId);
      }
      // In process: take the job ourselves so no worker also runs it.
      await withdrawJob(db, jobId, 'run in-process by npx toolsmith eval');
      await setRunStatus(db, runId, 'running', { message: 'npx toolsmith eval (in process)' });
      const [{ createEngine }, { createSandbox }, { verifierFromSettings }, { runEvaluation, formatEvalTable }] = await Promise.all([
        import('../workers/engines/create.ts'), import('../workers/sandbox/index.ts'), import('../workers/handlers/verifier.ts'), import('../workers/eval/run.ts'),
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
        const rows = await runEvaluation({
          db, engine: eng, sandbox, verifier, runId, signal: stop.signal,
          log: async (m) => { console.log(m); await appendEvent(db, runId, { message: m }); },
          metrics: (s, v) => logMetrics(db, runId, s, v),
        }, spec);
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
    } finally {
      await db.close();
    }
  },
};
