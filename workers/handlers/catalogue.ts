import type { JobHandler } from '../types.ts';
import { fetchModel } from '../trainer/model-fetch.ts';
import { addPackageDataset, BUILD_SANDBOX } from '../tasks/package-datasets.ts';
import { SandboxPool } from '../sandbox/pool.ts';
import { UserError } from '../../contracts/errors.ts';
import { PermanentJobError } from '../types.ts';

/**
 * "model.fetch" and "dataset.add" jobs: the CLI's `model fetch NAME` and `dataset add NAME` run by a worker, each
 * step of the download and build a line of the run's log. A name or pin the catalogue refuses fails at once (another
 * attempt cannot fix it); a network error is retried once.
 */
const permanent = (e: unknown) => (e instanceof UserError ? new PermanentJobError(e.message) : e);

export const modelFetch: JobHandler<{ name: string }> = async (ctx) => {
  await ctx.progress({ step: 0, totalSteps: 1 });
  const logs: Promise<void>[] = [];
  try {
    const r = await fetchModel(ctx.payload.name, (line) => logs.push(ctx.log(line)));
    await Promise.all(logs);
    await ctx.log(
      r.already ? `${ctx.payload.name} was already fetched` : `fetched ${ctx.payload.name} → the models folder`,
    );
    await ctx.progress({ step: 1 });
    return { name: ctx.payload.name, already: r.already, license: r.provenance.license ?? null };
  } catch (e) {
    throw permanent(e);
  }
};

export const datasetAdd: JobHandler<{ name: string }> = async (ctx) => {
  await ctx.progress({ step: 0, totalSteps: 1 });
  const logs: Promise<void>[] = [];
  try {
    const sandbox = await SandboxPool.start(BUILD_SANDBOX);
    const r = await addPackageDataset(ctx.db, ctx.payload.name, sandbox, (line) => logs.push(ctx.log(line))).finally(
      () => sandbox.close(),
    );
    await Promise.all(logs);
    const d = r.dataset;
    await ctx.log(
      r.status === 'created'
        ? `added ${d.name} v${d.version}: ${d.count} problem(s)`
        : `${d.name} v${d.version} already holds this content; nothing added`,
    );
    await ctx.progress({ step: 1 });
    return { name: d.name, version: d.version, count: d.count, status: r.status };
  } catch (e) {
    throw permanent(e);
  }
};
