/**
 * `npx toolsmith user …` and `npx toolsmith token …`: users, roles, one-time sign-in links and API tokens, straight
 * on the database (the operator's shell is trusted; the web API has the same under admin.*). Each change is audited
 * with via "cli".
 */
import { UserError } from '../contracts/errors.ts';
import { config } from '../server/config.ts';
import { openDatabase, type Database } from '../server/db/client.ts';
import { audit } from '../server/auth/audit.ts';
import { signInLink, SIGN_IN_LINK_MINUTES } from '../server/auth/auth.ts';
import {
  countUsers,
  createUser,
  disableUser,
  enableUser,
  listUsers,
  mustGetActiveUser,
  mustGetUser,
  removeUser,
  setPassword,
  setRole,
} from '../server/auth/users.ts';
import { createToken, listTokens, revokeToken } from '../server/auth/tokens.ts';
import { parseFlags } from './args.ts';
import type { Command } from './command.ts';

async function withDb<T>(f: (db: Database) => Promise<T>): Promise<T> {
  const db = await openDatabase(config().databaseUrl);
  try {
    return await f(db);
  } finally {
    await db.close();
  }
}

const cliAudit = (db: Database, action: string, target: string) =>
  audit(db, { via: 'cli', action, target, ok: true, userAgent: `toolsmith cli (${process.env.USER ?? 'unknown'})` });

/** Leading positional arguments (EMAIL, ROLE, ID), then the --flags. */
function split(args: string[]): { pos: string[]; flags: string[] } {
  const i = args.findIndex((a) => a.startsWith('--'));
  return i < 0 ? { pos: args, flags: [] } : { pos: args.slice(0, i), flags: args.slice(i) };
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

const USER_USAGE = `add|role|password|reset-link|disable|enable|remove|list|bootstrap ...

  user add EMAIL --role viewer|researcher|admin [--name N] [--password-stdin]
  user role EMAIL viewer|researcher|admin     ends the user's sessions and API tokens
  user password EMAIL            reads the new password (10+ characters) from standard input; ends the user's
                                 sessions and API tokens
  user reset-link EMAIL          prints a one-time sign-in URL (valid ${SIGN_IN_LINK_MINUTES} minutes)
  user disable EMAIL             no sign-in any more; sessions and API tokens end now (user enable undoes it)
  user enable EMAIL
  user remove EMAIL              disable for good: password, single sign-on links and tokens deleted; the runs
                                 and recipes they made keep their author (user add brings the account back)
  user list [--json]
  user bootstrap                 first start: creates the admin (TOOLSMITH_ADMIN_EMAIL) and prints its sign-in URL`;

export const userCommand: Command = {
  name: 'user',
  summary: 'users, roles and one-time sign-in links',
  usage: USER_USAGE,
  async run(args) {
    const [sub, ...rest] = args;
    const { pos, flags } = split(rest);
    const f = parseFlags(flags, { role: 'string', name: 'string', 'password-stdin': 'boolean', json: 'boolean' });
    const email = pos[0];
    const need = () => {
      if (!email) throw new UserError(`user ${sub} needs an EMAIL`, { field: 'EMAIL' });
      return email;
    };
    return withDb(async (db) => {
      switch (sub) {
        case 'add': {
          if (typeof f.role !== 'string')
            throw new UserError('user add needs --role viewer|researcher|admin', { field: '--role' });
          const password = f['password-stdin'] ? await readStdin() : undefined;
          const u = await createUser(db, {
            email: need(),
            role: f.role,
            name: typeof f.name === 'string' ? f.name : undefined,
            password,
          });
          await cliAudit(db, 'user.add', `email=${u.email}`);
          console.log(
            `added ${u.email} (${u.role})${u.hasPassword ? '' : `; sign in with a one-time link: npx toolsmith user reset-link ${u.email}`}`,
          );
          return 0;
        }
        case 'role': {
          const before = await mustGetUser(db, need(), 'EMAIL');
          const u = await setRole(db, before.email, pos[1] ?? '');
          await cliAudit(db, 'user.role', `email=${u.email}`);
          console.log(
            u.role === before.role
              ? `${u.email} is already ${u.role}`
              : `${u.email} is now ${u.role}; their sessions and API tokens have ended`,
          );
          return 0;
        }
        case 'password': {
          const ended = await setPassword(db, need(), await readStdin());
          await cliAudit(db, 'user.password', `email=${email}`);
          console.log(`password set for ${email}; ended ${ended.sessions} session(s) and ${ended.tokens} API token(s)`);
          return 0;
        }
        case 'disable': {
          const u = await disableUser(db, need());
          await cliAudit(db, 'user.disable', `email=${u.email}`);
          console.log(
            `${u.email} is disabled: no sign-in, sessions and API tokens ended (npx toolsmith user enable ${u.email} undoes it)`,
          );
          return 0;
        }
        case 'enable': {
          const u = await enableUser(db, need());
          await cliAudit(db, 'user.enable', `email=${u.email}`);
          console.log(`${u.email} may sign in again (${u.role}); API tokens revoked by the disable stay revoked`);
          return 0;
        }
        case 'remove': {
          const u = await removeUser(db, need());
          await cliAudit(db, 'user.remove', `email=${u.email}`);
          console.log(
            `removed ${u.email}: no sign-in, no password, no tokens; their runs and recipes keep them as author`,
          );
          return 0;
        }
        case 'reset-link': {
          const u = await mustGetActiveUser(db, need(), 'EMAIL');
          console.log(await signInLink(db, u.email));
          await cliAudit(db, 'user.reset-link', `email=${email}`);
          return 0;
        }
        case 'list': {
          const us = await listUsers(db);
          if (f.json) console.log(JSON.stringify(us));
          else
            for (const u of us)
              console.log(
                `${u.email}\t${u.role}\t${u.hasPassword ? 'password' : 'no password'}\t${u.createdAt.toISOString()}\t${u.status}`,
              );
          return 0;
        }
        case 'bootstrap': {
          const c = config();
          if ((await countUsers(db)) === 0) {
            const u = await createUser(db, { email: c.adminEmail, role: 'admin' });
            await cliAudit(db, 'user.bootstrap', `email=${u.email}`);
            console.log(
              `first start: created the admin ${u.email}; sign in (one time, ${SIGN_IN_LINK_MINUTES} minutes):\n  ${await signInLink(db, u.email)}`,
            );
          } else {
            console.log(`sign in at ${c.publicUrl}/sign-in — a new one-time link: npx toolsmith user reset-link EMAIL`);
          }
          return 0;
        }
        default:
          throw new UserError(`user: unknown subcommand "${sub ?? ''}"`, { fix: 'npx toolsmith user --help' });
      }
    });
  },
};

export const tokenCommand: Command = {
  name: 'token',
  summary: 'API tokens for scripts (Authorization: Bearer …)',
  usage: `create|list|revoke ...

  token create --user EMAIL [--scope read|write|admin] [--name N] [--expires-days D]
                 prints the token alone on one line (shown once); --scope (default read): read = runs, metrics,
                 trajectories, exports; write = also recipes, launches, imports; admin = also users and tokens.
                 A token never does more than its user's role allows.
  token list [--json]
  token revoke ID`,
  async run(args) {
    const [sub, ...rest] = args;
    const { pos, flags } = split(rest);
    const f = parseFlags(flags, {
      user: 'string',
      name: 'string',
      scope: 'string',
      'expires-days': 'number',
      json: 'boolean',
    });
    return withDb(async (db) => {
      switch (sub) {
        case 'create': {
          if (typeof f.user !== 'string') throw new UserError('token create needs --user EMAIL', { field: '--user' });
          const t = await createToken(db, {
            email: f.user,
            name: typeof f.name === 'string' ? f.name : undefined,
            scope: typeof f.scope === 'string' ? f.scope : undefined,
            expiresDays: typeof f['expires-days'] === 'number' ? f['expires-days'] : undefined,
          });
          await cliAudit(db, 'token.create', `id=${t.id} scope=${t.scope}`);
          console.log(t.token);
          return 0;
        }
        case 'list': {
          const ts = await listTokens(db);
          if (f.json) console.log(JSON.stringify(ts));
          else
            for (const t of ts)
              console.log(
                `${t.id}\t${t.user}\t${t.scope}\t${t.name}\t${t.revokedAt ? 'revoked' : t.expiresAt && t.expiresAt < new Date() ? 'expired' : 'active'}`,
              );
          return 0;
        }
        case 'revoke': {
          const id = pos[0];
          if (!id) throw new UserError('token revoke needs an ID (npx toolsmith token list)', { field: 'ID' });
          await revokeToken(db, id);
          await cliAudit(db, 'token.revoke', `id=${id}`);
          console.log(`revoked ${id}`);
          return 0;
        }
        default:
          throw new UserError(`token: unknown subcommand "${sub ?? ''}"`, { fix: 'npx toolsmith token --help' });
      }
    });
  },
};
