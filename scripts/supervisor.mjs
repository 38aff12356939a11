// The worker supervisor's pure parts and its record (scripts/start.mjs uses them): the restart back-off and the
// small JSON file in the data folder the System page reads (server/system/supervisor.ts, contracts/supervisor.ts).
import fs from 'node:fs';
import path from 'node:path';

export const FIRST_DELAY_MS = 1000;
export const MAX_DELAY_MS = 60_000;
/** A worker that ran this long before dying was healthy: its next restart starts the back-off again. */
export const RESET_AFTER_MS = 60_000;
const KEEP = 50;

/** The wait before the next start: 1 s, doubling up to 60 s while the worker keeps dying young. */
export function nextDelay(previousMs, ranMs) {
  if (previousMs === null || ranMs >= RESET_AFTER_MS) return FIRST_DELAY_MS;
  return Math.min(MAX_DELAY_MS, previousMs * 2);
}

export function supervisorFile(dataDir) {
  return path.join(dataDir, 'supervisor.json');
}

/** The record, written whole to a temporary file and renamed, so a reader never sees half of it. */
export function createRecord(dataDir, supervisorPid, now = Date.now()) {
  const state = {
    version: 1,
    supervisorPid,
    startedAt: now,
    worker: { state: 'starting', pid: null, startedAt: null, nextStartAt: null },
    restarts: 0,
    recent: [],
  };
  const file = supervisorFile(dataDir);
  const write = () => {
    try {
      fs.mkdirSync(dataDir, { recursive: true });
      fs.writeFileSync(`${file}.tmp`, JSON.stringify(state, null, 1));
      fs.renameSync(`${file}.tmp`, file);
    } catch (e) {
      console.error(`toolsmith: could not write ${file}: ${e.message}`);
    }
  };
  return {
    state,
    started(pid, at = Date.now()) {
      state.worker = { state: 'running', pid, startedAt: at, nextStartAt: null };
      write();
    },
    died({ pid, exit, ranMs, delayMs, at = Date.now() }) {
      state.restarts++;
      state.recent = [{ at, pid, exit, ranMs, delayMs }, ...state.recent].slice(0, KEEP);
      state.worker = { state: 'waiting', pid: null, startedAt: null, nextStartAt: at + delayMs };
      write();
    },
    stopped() {
      state.worker = { state: 'stopped', pid: null, startedAt: null, nextStartAt: null };
      write();
    },
  };
}
