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

// The same rule Better Auth applies to sign-in and link requests (zod's email), so every user can sign in.
const EMAIL = z.email();

export interface UserRow { id: string; email: string; name: string; role: Role; createdAt: Date; hasPassword: boolean }

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
  if (await db.prisma.user.findUnique({ where: { email } })) throw new UserError(`email: a user ${email} already exists`, { field: 'email', fix: `npx toolsmith user role ${email} ${role}` });
  const hash = input.password !== undefined ? await hashPassword(db, input.password) : null;
  const id = newId('u_');
  await db.prisma.user.create({ data: { id, email, name: input.name?.trim() || email.split('@')[0]!, role, emailVerified: true } });
  if (hash) await db.prisma.account.create({ data: { id: newId('acc_'), accountId: id, providerId: 'credential', userId: id, password: hash } });
  return (await getUser(db, email))!;
}

export async function setPassword(db: Database, emailRaw: string, password: string): Promise<void> {
  const user = await mustGetUser(db, emailRaw);
  const hash = await hashPassword(db, password);
  const acc = await db.prisma.account.findFirst({ where: { userId: user.id, providerId: 'credential' } });
  if (acc) await db.prisma.account.update({ where: { id: acc.id }, data: { password: hash, updatedAt: new Date() } });
  else await db.prisma.account.create({ data: { id: newId('acc_'), accountId: user.id, providerId: 'credential', userId: user.id, password: hash } });
}

export async function setRole(db: Database, emailRaw: string, role: string): Promise<UserRow> {
  const user = await mustGetUser(db, emailRaw);
  await db.prisma.user.update({ where: { id: user.id }, data: { role: checkRole(role), updatedAt: new Date() } });
  return (await getUser(db, user.email))!;
}

export async function getUser(db: Database, emailRaw: string): Promise<UserRow | null> {
  const u = await db.prisma.user.findUnique({ where: { email: emailRaw.trim().toLowerCase() }, include: { accounts: { where: { providerId: 'credential' } } } });
  return u ? { id: u.id, email: u.email, name: u.name, role: u.role as Role, createdAt: u.createdAt, hasPassword: u.accounts.some((a) => a.password) } : null;
}

export async function mustGetUser(db: Database, email: string, field = 'email'): Promise<UserRow> {
  const u = await getUser(db, email);
  if (!u) throw new UserError(`${field}: no user ${email}`, { field, fix: `npx toolsmith user add ${email} --role viewer` });
  return u;
}

export async function listUsers(db: Database): Promise<UserRow[]> {
  const us = await db.prisma.user.findMany({ orderBy: { createdAt: 'asc' }, include: { accounts: { where: { providerId: 'credential' } } } });
  return us.map((u) => ({ id: u.id, email: u.email, name: u.name, role: u.role as Role, createdAt: u.createdAt, hasPassword: u.accounts.some((a) => a.password) }));
}

export const countUsers = (db: Database): Promise<number> => db.prisma.user.count();
