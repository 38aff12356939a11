/**
 * API tokens for scripts and the CLI: `tsk_` + 32 random bytes, shown once; only the SHA-256 is stored. A token acts
 * with the lower of its scope's role and its user's current role (contracts/access.ts tokenRole), until it is revoked
 * or expires.
 */
import crypto from 'node:crypto';
import { UserError } from '../../contracts/errors.ts';
import type { Database } from '../db/client.ts';
import { newId } from '../ids.ts';
import { isTokenScope, type Principal, type Role, TOKEN_SCOPES, tokenRole } from '../../contracts/access.ts';
import { mustGetUser } from './users.ts';
import { userActive } from './access-policy.ts';
import {
  findApiToken,
  findApiTokenByHash,
  insertApiToken,
  listApiTokenRows,
  setApiTokenRevoked,
  touchApiToken,
} from '../store/api-tokens.ts';

export const TOKEN_PREFIX = 'tsk_';
const hash = (token: string) => crypto.createHash('sha256').update(token).digest('hex');

export async function createToken(
  db: Database,
  input: { email: string; name?: string; expiresDays?: number; scope?: string },
  now = new Date(),
) {
  // The narrowest by default: a script that reads metrics should not be able to launch or delete.
  const scope = input.scope ?? 'read';
  if (!isTokenScope(scope))
    throw new UserError(`scope: one of ${TOKEN_SCOPES.join(', ')}, not "${scope}"`, { field: 'scope' });
  const user = await mustGetUser(db, input.email, 'user');
  if (
    input.expiresDays !== undefined &&
    !(Number.isFinite(input.expiresDays) && input.expiresDays > 0 && input.expiresDays <= 3650)
  ) {
    throw new UserError(`expires-days: a number of days between 1 and 3650, not ${input.expiresDays}`, {
      field: 'expires-days',
    });
  }
  const name = (input.name ?? 'cli').trim();
  if (!name || name.length > 100) throw new UserError('name: 1 to 100 characters', { field: 'name' });
  const token = TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url');
  const row = await insertApiToken(db, {
    id: newId('tok_'),
    userId: user.id,
    name,
    tokenHash: hash(token),
    scope,
    expiresAt: input.expiresDays ? new Date(now.getTime() + input.expiresDays * 86_400_000) : null,
  });
  return { token, id: row.id, scope, expiresAt: row.expiresAt };
}

export async function revokeToken(db: Database, id: string, now = new Date()) {
  const row = await findApiToken(db, id);
  if (!row) throw new UserError(`id: no API token ${id}`, { field: 'id', fix: 'npx toolsmith token list' });
  if (!row.revokedAt) await setApiTokenRevoked(db, id, now);
  return { id, revokedAt: row.revokedAt ?? now };
}

export async function listTokens(db: Database) {
  const rows = await listApiTokenRows(db);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    user: r.user.email,
    scope: r.scope,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    revokedAt: r.revokedAt,
    lastUsedAt: r.lastUsedAt,
  }));
}

/** Neither revoked nor expired. */
export const tokenLive = (t: { revokedAt: Date | null; expiresAt: Date | null }, now: Date) =>
  !t.revokedAt && !(t.expiresAt && t.expiresAt <= now);

/** The principal a bearer token stands for, or null (unknown, revoked, expired, its user disabled or removed). */
export async function principalOfToken(db: Database, token: string, now = new Date()): Promise<Principal | null> {
  if (!token.startsWith(TOKEN_PREFIX) || token.length > 200) return null;
  const row = await findApiTokenByHash(db, hash(token));
  if (!row || !tokenLive(row, now) || !userActive(row.user)) return null;
  // lastUsedAt at most once a minute: a script's every call need not write.
  if (!row.lastUsedAt || now.getTime() - row.lastUsedAt.getTime() > 60_000) {
    await touchApiToken(db, row.id, now).catch(() => {});
  }
  return {
    userId: row.userId,
    email: row.user.email,
    role: tokenRole(row.user.role as Role, row.scope),
    via: 'token',
    tokenId: row.id,
    scope: isTokenScope(row.scope) ? row.scope : 'read',
  };
}
