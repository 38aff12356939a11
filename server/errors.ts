import { UserError, errorMessage } from '../contracts/errors.ts';
import { config } from './config.ts';

/** Print an error for a person: a UserError as its one line; anything else as one line plus where to look. */
export function reportFatal(prefix: string, err: unknown): void {
  if (err instanceof UserError) {
    console.error(`${prefix}: ${err.message}`);
  } else {
    const first = errorMessage(err).split('\n')[0];
    console.error(`${prefix}: ${first}`);
    if (config().debug) console.error(err);
    else console.error(`${prefix}: (set TOOLSMITH_DEBUG=1 for the full stack trace)`);
  }
}
