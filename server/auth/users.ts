/**
 * Users and their roles (the admin's side of sign-in): created by an admin or the CLI — nobody signs up. A password
 * is optional: a user without one signs in through a one-time link (auth.ts signInLink) or the OIDC issuer.
 */
import { z } from 'zod';
import { UserError } from '../../contracts/errors.ts';
import type { Database } from '../db/client.ts';
import { newId } from '../ids.ts';
import { ROLES, type Role } from '../trpc/init.ts';
import { getAuth } from './auth.ts';
import { countUserRows, findUserByEmail, insertUser, listUserRows, updateUserRole, upsertPassword } from '../store/users.ts';

// The same rule Better Auth applies to sign-in and link requests (zod's email), so every user can sign in.
const EMAIL = z.email();

export interface UserRow { id: string; email: string; name: string; role: Role; createdAt: Date; hasPassword: boolean }

type StoredUser = NonNullable<Awaited<ReturnType<typeof findUserByEmail>>>;
const toUserRow = (u: StoredUser): UserRow => ({ id: u.id, email: u.email, name: u.name, role: u.role as Role, createdAt: u.createdAt, hasPassword: u.accounts.some((a) => a.password) });

export function checkEmail(email: string, field = 'email'): string {
  const e = email.trim().toLowerCase();
  if (!EMAIL.safeParse(e).success) throw new UserError(`${field}: "${email}" is not an email address`, { field });
  return e;
}

export function checkRole(role: string, field = 'role'): Role {
  if (!(ROLES as readonly string[]).includes(role)) throw new UserError(`${field}: must be one of ${ROLES.join(', ')}, not "${role}"`, { field });
  return role as Role;
}

async function hashPassword(db: Database, password: string): Promise<string> {
  if (password.length < 10) throw new UserError('password: at least 10 characters', { field: 'password' });
  if (password.length > 256) throw new UserError('password: at most 256 characters', { field: 'password' });
  const ctx = await getAuth(db).$context;
  return ctx.password.hash(password); // Better Auth's scrypt
}

export async function createUser(db: Database, input: { email: string; role: string; name?: string; password?: string }): Promise<UserRow> {
  const email = checkEmail(input.email);
  const role = checkRole(input.role);
  if (await findUserByEmail(db, email)) throw new UserError(`email: a user ${email} already exists`, { field: 'email', fix: `npx toolsmith user role ${email} ${role}` });
  const hash = input.password !== undefined ? await hashPassword(db, input.password) : null;
  const id = newId('u_');
  await insertUser(db, { id, email, name: input.name?.trim() || email.split('@')[0]!, role });
  if (hash) await upsertPassword(db, id, newId('acc_'), hash);
  return (await getUser(db, email))!;
}

export async function setPassword(db: Database, emailRaw: string, password: string): Promise<void> {
  const user = await mustGetUser(db, emailRaw);
  const hash = await hashPassword(db, password);
  await upsertPassword(db, user.id, newId('acc_'), hash);
}

export async function setRole(db: Database, emailRaw: string, role: string): Promise<UserRow> {
  const user = await mustGetUser(db, emailRaw);
  await updateUserRole(db, user.id, checkRole(role));
  return (await getUser(db, user.email))!;
}

export async function getUser(db: Database, emailRaw: string): Promise<UserRow | null> {
  const u = await findUserByEmail(db, emailRaw.trim().toLowerCase());
  return u ? toUserRow(u) : null;
}

export async function mustGetUser(db: Database, email: string, field = 'email'): Promise<UserRow> {
  const u = await getUser(db, email);
  if (!u) throw new UserError(`${field}: no user ${email}`, { field, fix: `npx toolsmith user add ${email} --role viewer` });
  return u;
}

export async function listUsers(db: Database): Promise<UserRow[]> {
  return (await listUserRows(db)).map(toUserRow);
}

export const countUsers = (db: Database): Promise<number> => countUserRows(db);
