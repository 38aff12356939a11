import type { StoredEventInput as EventInput, EventLevel, RunEvent } from '../../contracts/events.ts';
import type { Database, Sql } from '../db/client.ts';

const MAX_BATCH = 200;

/**
 * Append events to a run's stream and return the last seq. `seq` is computed inside the INSERT as
 * max(seq)+i, and (runId, seq) is the primary key: two writers that race collide on the key and one retries,
 * so seqs are gapless and appear in commit order. That is what lets a reader resume from "seq > cursor".
 */
export async function appendEvents(db: Database, runId: string, events: EventInput[], on?: Sql): Promise<number> {
  let last = 0;
  for (let i = 0; i < events.length; i += MAX_BATCH)
    last = await appendChunk(db, runId, events.slice(i, i + MAX_BATCH), on);
  return last;
}

export function appendEvent(db: Database, runId: string, event: EventInput, on?: Sql): Promise<number> {
  return appendEvents(db, runId, [event], on);
}

async function appendChunk(db: Database, runId: string, events: EventInput[], on?: Sql): Promise<number> {
  if (events.length === 0) return 0;
  const now = Date.now();
  const base = `(SELECT COALESCE(MAX("seq"), 0) FROM "RunEvent" WHERE "runId" = ?)`;
  const selects: string[] = [];
  const params: unknown[] = [];
  events.forEach((e, i) => {
    selects.push(
      `SELECT CAST(? AS TEXT), ${base} + ${i + 1}, CAST(? AS DOUBLE PRECISION), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT), CAST(? AS TEXT)`,
    );
    params.push(
      runId,
      runId,
      now,
      e.level ?? 'info',
      e.type ?? 'log',
      e.message,
      e.data === undefined ? null : JSON.stringify(e.data),
    );
  });
  const sql = `INSERT INTO "RunEvent" ("runId", "seq", "time", "level", "type", "message", "data") ${selects.join(' UNION ALL ')}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await db.execute(sql, params, on);
      break;
    } catch (e) {
      // Inside a caller's transaction a retry cannot help (PostgreSQL aborts the transaction): let it fail.
      if (!isUniqueViolation(e) || attempt >= 50 || on) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
    }
  }
  return lastEventSeq(db, runId, on);
}

/** The seq of a run's last event (0 when it has none): one lookup at the end of the (runId, seq) primary key. */
export async function lastEventSeq(db: Database, runId: string, on?: Sql): Promise<number> {
  const rows = await db.query<{ m: number | bigint | null }>(
    `SELECT MAX("seq") AS "m" FROM "RunEvent" WHERE "runId" = ?`,
    [runId],
    on,
  );
  return Number(rows[0]?.m ?? 0);
}

export function isUniqueViolation(e: unknown): boolean {
  const text = `${(e as Error)?.message ?? ''} ${JSON.stringify((e as { meta?: unknown })?.meta ?? '')}`;
  return /UNIQUE constraint|unique constraint|duplicate key|23505|P2002|SQLITE_CONSTRAINT_(?:PRIMARYKEY|UNIQUE)/i.test(
    text,
  );
}

type EventRow = Omit<RunEvent, 'level' | 'data'> & { level: string; data: string | null };
const toRunEvent = (r: EventRow): RunEvent => ({
  ...r,
  level: r.level as EventLevel,
  data: r.data === null ? null : JSON.parse(r.data),
});

/** A run's events of some types, oldest first (e.g. its stage and evaluation milestones among thousands of metrics). */
export async function readEventsOfTypes(db: Database, runId: string, types: string[]): Promise<RunEvent[]> {
  const rows = await db.prisma.runEvent.findMany({ where: { runId, type: { in: types } }, orderBy: { seq: 'asc' } });
  return rows.map(toRunEvent);
}

/** Events after `afterSeq`, oldest first: one range scan on the (runId, seq) primary key. */
export async function readEvents(db: Database, runId: string, afterSeq = 0, limit = 500): Promise<RunEvent[]> {
  const rows = await db.prisma.runEvent.findMany({
    where: { runId, seq: { gt: afterSeq } },
    orderBy: { seq: 'asc' },
    take: limit,
  });
  return rows.map(toRunEvent);
}
