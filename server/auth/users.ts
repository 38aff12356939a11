/**
 * Users and their roles (the admin's side of sign-in): created by an admin or the CLI — nobody signs up. A password
 * is optional: a user without one signs in through a one-time link (auth.ts signInLink) or the OIDC issuer.
 */
import { z } from 'zod';
import { UserError } from '../../contracts/errors.ts';
import type { Database } from '../db/client.ts';
import { newId } from '../ids.ts';
import { ROLES, type Role } from '../../contracts/access.ts';
import { getAuth } from './auth.ts';
import { WindowLimiter } from '../http/window-limiter.ts';
import {
  countUserRows,
  endOtherSessions,
  endUserAccess,
  findPasswordAccount,
  findUserByEmail,
  insertUser,
  listUserRows,
  reviveUser,
  setUserDisabled,
  upsertPassword,
  withActiveAdmins,
  type AdminWrites,
} from '../store/users.ts';

// The same rule Better Auth applies to sign-in and link requests (zod's email), so every user can sign in.
const EMAIL = z.email();

/** active: may sign in; disabled: no sign-in, no session, no token (enable brings it back); removed: see removeUser. */
export type UserStatus = 'active' | 'disabled' | 'removed';
export interface UserRow {
  id: string;
  email: string;
  name: string;
  role: Role;
  createdAt: Date;
  hasPassword: boolean;
  status: UserStatus;
}

type StoredUser = NonNullable<Awaited<ReturnType<typeof findUserByEmail>>>;
const statusOf = (u: { disabledAt: Date | null; removedAt: Date | null }): UserStatus =>
  u.removedAt ? 'removed' : u.disabledAt ? 'disabled' : 'active';
const toUserRow = (u: StoredUser): UserRow => ({
  id: u.id,
  email: u.email,
  name: u.name,
  role: u.role as Role,
  createdAt: u.createdAt,
  hasPassword: u.accounts.some((a) => a.password),
  status: statusOf(u),
});

export function checkEmail(email: string, field = 'email'): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.safeParse(e).success) throw new UserError(`${field}: "${email}" is not an email address`, { field });
  return e;
}

export function checkRole(role: string, field = 'role'): Role {
  if (!(ROLES as readonly string[]).includes(role))
    throw new UserError(`${field}: must be one of ${ROLES.join(', ')}, not "${role}"`, { field });
  return role as Role;
}

async function hashPassword(db: Database, password: string, field = 'password'): Promise<string> {
  if (password.length < 10) throw new UserError(`${field}: at least 10 characters`, { field });
  if (password.length > 256) throw new UserError(`${field}: at most 256 characters`, { field });
  const ctx = await getAuth(db).$context;
  return ctx.password.hash(password); // Better Auth's scrypt
}

export async function createUser(
  db: Database,
  input: { email: string; role: string; name?: string; password?: string },
): Promise<UserRow> {
  const email = checkEmail(input.email);
  const role = checkRole(input.role);
  const existing = await findUserByEmail(db, email);
  if (existing && !existing.removedAt)
    throw new UserError(`email: a user ${email} already exists`, {
      field: 'email',
      fix: `npx toolsmith user role ${email} ${role}`,
    });
  const hash = input.password !== undefined ? await hashPassword(db, input.password) : null;
  const name = input.name?.trim() || email.split('@')[0]!;
  // A removed user added again gets their row back, so the runs and recipes they made are theirs again.
  const id = existing ? existing.id : newId('u_');
  if (existing) await reviveUser(db, id, { name, role });
  else await insertUser(db, { id, email, name, role });
  if (hash) await upsertPassword(db, id, newId('acc_'), hash);
  return (await getUser(db, email))!;
}

/** An admin's password reset: the new hash, and every session and API token of the user ended. */
export async function setPassword(db: Database, emailRaw: string, password: string, now = new Date()) {
  const user = await mustGetUser(db, emailRaw);
  const hash = await hashPassword(db, password);
  await upsertPassword(db, user.id, newId('acc_'), hash);
  return endUserAccess(db, user.id, now);
}

/** A new role ends the user's sessions and API tokens (whatever they opened under the old role). Same role: no-op. */
export async function setRole(db: Database, emailRaw: string, role: string, now = new Date()): Promise<UserRow> {
  const user = await mustGetUser(db, emailRaw);
  const next = checkRole(role);
  if (next === user.role) return user;
  await keepingAnAdmin(db, user, 'role', async (w) => {
    await w.setRole(user.id, next);
    await w.endAccess(user.id, now);
  });
  return (await getUser(db, user.email))!;
}

/**
 * Test-only fault injection (tests/integration/last-admin-race.test.ts; unset in the app): `requested` as a change
 * asks for its transaction, `checked` once the last-admin check passed inside it, before the write. A test holds one
 * change at `checked` while another starts, the interleaving that let two demotions both pass.
 */
export const adminChangeHooks: {
  requested?: (email: string) => void;
  checked?: (email: string) => Promise<void>;
} = {};

/** True when taking `userId` away would leave no active admin (nobody could then manage users from the web). */
const isLastAdmin = (activeAdminIds: readonly string[], userId: string) =>
  activeAdminIds.includes(userId) && activeAdminIds.length === 1;

/**
 * Refuses to take away the last active admin. The check and `write` share one transaction: two
 * demotions at once of the last two admins would otherwise each see the other still active and both go through.
 */
async function keepingAnAdmin(db: Database, user: UserRow, what: string, write: (w: AdminWrites) => Promise<void>) {
  adminChangeHooks.requested?.(user.email);
  await withActiveAdmins(db, async (admins, w) => {
    if (isLastAdmin(admins, user.id))
      throw new UserError(`${what}: ${user.email} is the only active admin; make another admin first`, {
        field: what,
        fix: 'npx toolsmith user role OTHER_EMAIL admin',
      });
    await adminChangeHooks.checked?.(user.email);
    await write(w);
  });
}

/** Who acts (the web's signed-in admin; undefined: the operator's shell). An admin cannot lock themselves out. */
const notSelf = (user: UserRow, actorId: string | undefined, what: string) => {
  if (actorId && actorId === user.id)
    throw new UserError(`email: you cannot ${what} yourself; another admin can`, { field: 'email' });
};

/** No sign-in, every session and token ended; the account and what it made stay (enableUser undoes it). */
export async function disableUser(
  db: Database,
  emailRaw: string,
  actorId?: string,
  now = new Date(),
): Promise<UserRow> {
  const user = await mustGetUser(db, emailRaw);
  notSelf(user, actorId, 'disable');
  await keepingAnAdmin(db, user, 'disable', async (w) => {
    if (user.status === 'active') await w.setDisabled(user.id, now);
    await w.endAccess(user.id, now); // also when already disabled: nothing may outlive a disable
  });
  return (await getUser(db, user.email))!;
}

export async function enableUser(db: Database, emailRaw: string): Promise<UserRow> {
  const user = await mustGetUser(db, emailRaw);
  if (user.status === 'disabled') await setUserDisabled(db, user.id, null);
  return (await getUser(db, user.email))!;
}

/**
 * Takes the user away for good: sessions, password, OIDC links and tokens deleted or revoked. The row stays (marked
 * removed, hidden from the list) so runs, recipes, share links and the audit log still name their author's email;
 * their runs are then only admins' to control. `user add` with the same email brings the row back.
 */
export async function removeUser(db: Database, emailRaw: string, actorId?: string, now = new Date()): Promise<UserRow> {
  const user = await mustGetUser(db, emailRaw);
  notSelf(user, actorId, 'remove');
  await keepingAnAdmin(db, user, 'remove', (w) => w.markRemoved(user.id, now));
  return (await getUser(db, user.email))!;
}

// Wrong current passwords per user: the sign-in edge's sliding window (bounded keys; a reservation, so parallel tries
// cannot all pass one check made before any of them counted).
const changeFailures = new WindowLimiter({ max: 5, windowMs: 15 * 60_000 });

/**
 * A user changes their own password: the current one must match (at most 5 wrong tries per 15 minutes, so a
 * borrowed session cannot guess it), then every other session of theirs ends. API tokens, which only admins issue,
 * stay.
 */
export async function changeOwnPassword(
  db: Database,
  who: { userId: string; sessionId?: string },
  currentPassword: string,
  newPassword: string,
) {
  const attempt = changeFailures.reserve(who.userId);
  if (!attempt.ok)
    throw new UserError('currentPassword: too many wrong tries; wait 15 minutes', { field: 'currentPassword' });
  let wrong = false;
  try {
    const acc = await findPasswordAccount(db, who.userId);
    if (!acc?.password)
      throw new UserError(
        'currentPassword: you have no password here (you sign in with a link or single sign-on); an admin can set one: npx toolsmith user password EMAIL',
        { field: 'currentPassword' },
      );
    const ctx = await getAuth(db).$context;
    if (!(await ctx.password.verify({ hash: acc.password, password: currentPassword }))) {
      wrong = true;
      throw new UserError('currentPassword: that is not your current password', { field: 'currentPassword' });
    }
  } finally {
    attempt.settle(wrong);
  }
  if (newPassword === currentPassword)
    throw new UserError('newPassword: the same as the current one', { field: 'newPassword' });
  const hash = await hashPassword(db, newPassword, 'newPassword');
  await upsertPassword(db, who.userId, newId('acc_'), hash);
  changeFailures.reset(who.userId);
  return { endedSessions: await endOtherSessions(db, who.userId, who.sessionId) };
}

export async function getUser(db: Database, emailRaw: string): Promise<UserRow | null> {
  const u = await findUserByEmail(db, emailRaw.trim().toLowerCase());
  return u ? toUserRow(u) : null;
}

/** The user, not removed (a removed one is as good as unknown until added again). */
export async function mustGetUser(db: Database, email: string, field = 'email'): Promise<UserRow> {
  const u = await getUser(db, email);
  if (!u)
    throw new UserError(`${field}: no user ${email}`, { field, fix: `npx toolsmith user add ${email} --role viewer` });
  if (u.status === 'removed')
    throw new UserError(`${field}: ${u.email} was removed`, {
      field,
      fix: `npx toolsmith user add ${u.email} --role viewer`,
    });
  return u;
}

/** The user, who must be able to sign in now (a one-time link for anyone else would open nothing). */
export async function mustGetActiveUser(db: Database, email: string, field = 'email'): Promise<UserRow> {
  const u = await mustGetUser(db, email, field);
  if (u.status !== 'active')
    throw new UserError(`${field}: ${u.email} is disabled; a link would not sign them in`, {
      field,
      fix: `npx toolsmith user enable ${u.email}`,
    });
  return u;
}

/** Everyone but the removed. */
export async function listUsers(db: Database): Promise<UserRow[]> {
  return (await listUserRows(db)).filter((u) => !u.removedAt).map(toUserRow);
}

export const countUsers = (db: Database): Promise<number> => countUserRows(db);
