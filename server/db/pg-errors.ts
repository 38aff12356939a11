import { UserError } from '../errors.ts';
import { redact } from './url.ts';

/** Turn a PostgreSQL connection failure into one line that says what to do. */
export function pgConnectionError(url: string, err: unknown): UserError {
  const e = err as { code?: string; message?: string };
  const where = redact(url);
  switch (e.code) {
    case 'ECONNREFUSED':
      return new UserError(`cannot reach PostgreSQL at ${where} (connection refused)`, { fix: 'start PostgreSQL or correct the host/port in DATABASE_URL' });
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UserError(`cannot resolve the PostgreSQL host in ${where}`, { fix: 'correct the host name in DATABASE_URL' });
    case '28P01':
    case '28000':
      return new UserError(`PostgreSQL refused the credentials in ${where}`, { fix: 'correct the user/password in DATABASE_URL' });
    case '3D000':
      return new UserError(`the database named in ${where} does not exist`, { fix: 'create it (createdb NAME) or correct DATABASE_URL' });
    default:
      return new UserError(`cannot connect to PostgreSQL at ${where}: ${e.message ?? String(err)}`, { fix: 'check DATABASE_URL and that the server is running' });
  }
}
