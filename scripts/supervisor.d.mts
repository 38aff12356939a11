// Types for scripts/supervisor.mjs (plain JS so `npm start` needs no TypeScript loader); the record is contracts/supervisor.ts.
import type { SupervisorRecord } from '../contracts/supervisor.ts';

export const FIRST_DELAY_MS: number;
export const MAX_DELAY_MS: number;
export const RESET_AFTER_MS: number;
export function nextDelay(previousMs: number | null, ranMs: number): number;
export function supervisorFile(dataDir: string): string;
export function createRecord(
  dataDir: string,
  supervisorPid: number,
  now?: number,
): {
  state: SupervisorRecord;
  started(pid: number, at?: number): void;
  died(d: { pid: number; exit: string; ranMs: number; delayMs: number; at?: number }): void;
  stopped(): void;
};
