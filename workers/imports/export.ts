/**
 * Writing a run (native or imported) out as ATIF v1.4: one `<trajectory id>.trajectory.json` per trajectory in a
 * folder, read a page at a time so a run of any size exports in bounded memory. `npx toolsmith import` reads the
 * folder back (its layout is ATIF's).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Database } from '../../server/db/client.ts';
import { listRunTrajectoryContents, readTokensOf } from '../../server/store/trajectories.ts';
import { foreignOfStored, type StoredRow, toAtif } from '../../server/imports/atif-export.ts';

const PAGE = 200;

export async function exportRunAtif(
  db: Database,
  runId: string,
  outDir: string,
  agent: { name: string; version: string },
): Promise<{ trajectories: number }> {
  fs.mkdirSync(outDir, { recursive: true });
  let after: string | null = null;
  let n = 0;
  for (;;) {
    const page = await listRunTrajectoryContents(db, runId, after, PAGE);
    if (page.length === 0) break;
    const tokens = await readTokensOf(
      db,
      page.map((r) => r.id),
    );
    for (const r of page) {
      const row: StoredRow = { ...r, content: JSON.parse(r.content) as StoredRow['content'] };
      const doc = toAtif(foreignOfStored(row, tokens.get(r.id) ?? null), agent);
      // Written then renamed: a reader following the folder never sees half a document.
      const file = path.join(outDir, `${r.id}.trajectory.json`);
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(doc));
      fs.renameSync(`${file}.tmp`, file);
      n++;
    }
    after = page.at(-1)!.id;
  }
  return { trajectories: n };
}
