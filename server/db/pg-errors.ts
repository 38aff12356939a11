import { UserError } from '../../contracts/errors.ts';
import { redact } from './url.ts';

/** Turn a PostgreSQL connection failure into one line that says what to do. */
export function pgConnectionError(url: string, err: unknown): UserError {
  const e = driverError(err);
  const where = redact(url);
  switch (e.code) {
    case 'ECONNREFUSED':
      return new UserError(`cannot reach PostgreSQL at ${where} (connection refused)`, {
        fix: 'start PostgreSQL or correct the host/port in DATABASE_URL',
      });
    case 'DatabaseNotReachable': // Prisma's adapter: ECONNREFUSED or ENOTFOUND
      return new UserError(`cannot reach PostgreSQL at ${where}`, {
        fix: 'start PostgreSQL or correct the host/port in DATABASE_URL',
      });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UserError(`cannot resolve the PostgreSQL host in ${where}`, {
        fix: 'correct the host name in DATABASE_URL',
      });
    case '28P01':
    case '28000':
      return new UserError(`PostgreSQL refused the credentials in ${where}`, {
        fix: 'correct the user/password in DATABASE_URL',
      });
    case '3D000':
      return new UserError(`the database named in ${where} does not exist`, {
        fix: 'create it (createdb NAME) or correct DATABASE_URL',
      });
    default:
      return new UserError(
        `cannot connect to PostgreSQL at ${where}: ${(e.message ?? String(err)).replace(/\s+/g, ' ').trim()}`,
        { fix: 'check DATABASE_URL and that the server is running' },
      );
  }
}

/**
 * Prisma's pg adapter does not pass the driver's error on: it keeps its kind and original code in
 * meta.driverAdapterError.cause (and its message spans several lines). Get back what pg would have thrown.
 */
function driverError(err: unknown): { code?: string; message?: string } {
  const cause = (
    err as {
      meta?: { driverAdapterError?: { cause?: { kind?: string; originalCode?: string; originalMessage?: string } } };
    }
  )?.meta?.driverAdapterError?.cause;
  if (cause) return { code: cause.originalCode ?? cause.kind, message: cause.originalMessage ?? cause.kind };
  return (err ?? {}) as { code?: string; message?: string };
}
