import { adminProcedure, publicProcedure, router } from '../init.ts';
import { latestDiagnostics, launchDiagnostics } from '../../lifecycle.ts';
import { listLeasedJobs } from '../../store/jobs.ts';
import { config } from '../../config.ts';
import { readSupervisor } from '../../system/supervisor.ts';
import { refusals } from '../../http/refusals.ts';
import { processAuthEdge } from '../../http/auth-edge.ts';

/** Password sign-ins' scrypt hashes in this web process: running now, waiting, the most ever at once, and the cap. */
function signInHashes() {
  const gate = processAuthEdge().hashGate;
  return { active: gate.active, queued: gate.queued, peak: gate.peak, cap: gate.limit };
}

export const systemRouter = router({
  /**
   * Anyone may ask whether the server is up; only a signed-in caller learns which runs are busy on which worker
   * hosts (run ids and lease owners name hosts and work in progress), and how many anonymous requests this web
   * process refused since it started, by kind (counted, never written: server/http/refusals.ts), and its password
   * sign-ins' hashes (running, queued, the most at once, the cap). Anonymous callers get the count of busy jobs alone.
   */
  health: publicProcedure.query(async ({ ctx }) => {
    const leased = await listLeasedJobs(ctx.db);
    if (!ctx.principal) return { dialect: ctx.db.dialect, now: Date.now(), busyJobs: leased.length };
    return {
      dialect: ctx.db.dialect,
      now: Date.now(),
      busyJobs: leased.length,
      busyWorkers: leased,
      refusedAnonymous: refusals.totalsByKind(),
      signInHashes: signInHashes(),
    };
  }),
  latestDiagnostics: adminProcedure.query(({ ctx }) => latestDiagnostics(ctx.db)),
  /** The worker's restarts under `npm start` (null when the web server runs without its supervisor). */
  supervisor: adminProcedure.query(() => readSupervisor(config().dataDir)),
  runDiagnostics: adminProcedure.mutation(({ ctx }) => launchDiagnostics(ctx.db)),
});
