import { ingestBatch } from '@/server/imports/ingest.ts';
import { handleIngest } from '@/server/imports/ingest-http.ts';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Add a batch of trajectories (ATIF or Toolsmith's shape) to an ingest run; idempotent by trajectory id. */
export async function POST(req: Request, ctx: { params: Promise<{ id: string }> }) {
  const { id } = await ctx.params;
  return handleIngest(req, 'ingest.batch', `run:${id}`, (db, p, body) => ingestBatch(db, p, id, body));
}
