import fs from 'node:fs';
import path from 'node:path';
import { supervisorRecordSchema, type SupervisorRecord } from '../../contracts/supervisor.ts';

/**
 * The worker supervisor's record in the data folder (written by scripts/start.mjs); null when this web server was
 * not started by `npm start` (no file) or the file is not one we understand.
 */
export function readSupervisor(dataDir: string): SupervisorRecord | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(dataDir, 'supervisor.json'), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = supervisorRecordSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
