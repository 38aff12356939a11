import { z } from 'zod';

/** What `npm start`'s supervisor records about its worker (scripts/supervisor.mjs writes it; the System page shows it). */
export const supervisorRecordSchema = z.object({
  version: z.literal(1),
  supervisorPid: z.number().int(),
  startedAt: z.number(),
  worker: z.object({
    state: z.enum(['starting', 'running', 'waiting', 'stopped']),
    pid: z.number().int().nullable(),
    startedAt: z.number().nullable(),
    nextStartAt: z.number().nullable(),
  }),
  restarts: z.number().int().nonnegative(),
  /** Newest first. `exit` is `code N` or the signal's name. */
  recent: z.array(
    z.object({ at: z.number(), pid: z.number().int(), exit: z.string(), ranMs: z.number(), delayMs: z.number() }),
  ),
});
export type SupervisorRecord = z.infer<typeof supervisorRecordSchema>;
