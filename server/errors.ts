import { UserError, errorMessage } from '../contracts/errors.ts';
import { config } from './config.ts';

/** Print an error for a person: a UserError as its one line; anything else as one line plus where to look. */
export function reportFatal(prefix: string, err: unknown): void {
  if (err instanceof UserError) {
    console.error(`${prefix}: ${err.message}`);
  } else {
    console.error(`${prefix}: ${summaryLine(errorMessage(err))}`);
    if (config().debug) console.error(err);
    else console.error(`${prefix}: (set TOOLSMITH_DEBUG=1 for the full stack trace)`);
  }
}

/** Pure: one line for a person from a multi-line message. Prisma's start with a blank line and put the cause last
 *  ("Invalid `prisma.problem.create()` invocation: … database is locked"): the first and the last non-blank lines. */
export function summaryLine(message: string): string {
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  if (lines.length <= 1) return lines[0] ?? '(no message)';
  return `${lines[0]} … ${lines[lines.length - 1]}`;
}
