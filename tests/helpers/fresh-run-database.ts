import { after, afterEach, before } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { freshDatabase } from './db.ts';
import { killAll } from './proc.ts';

/**
 * For a test file that starts workers and trainers: one fresh database for the whole file (handed to `use`, with
 * its URL for the workers, once it is up; closed at the end), and every process a test started killed after it, so none outlives its test.
 */
export function freshRunDatabase(use: (fresh: { db: Database; url: string }) => void): void {
  let fresh: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  before(async () => {
    fresh = await freshDatabase();
    use(fresh);
  });
  afterEach(async () => {
    await killAll();
  });
  after(async () => {
    await fresh?.close();
  });
}
