import { openIngestRun } from '@/server/imports/ingest.ts';
import { handleIngest } from '@/server/imports/ingest-http.ts';

export const dynamic = 'force-dynamic';
export const runtime = 'nodejs';

/** Open a run that a script trained elsewhere pushes into (docs/importing-runs.md "Ingest API"). */
export function POST(req: Request) {
  return handleIngest(req, 'ingest.openRun', null, openIngestRun);
}
