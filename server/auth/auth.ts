/**
 * Sign-in through Better Auth (docs/deploying-and-security.md "Sign-in": why Better Auth): email + password (scrypt, a
 * memory-hard hash), single sign-on through any OpenID Connect issuer configured by environment variables,
 * sessions in the database, one-time sign-in links (the first admin's, `toolsmith user reset-link`), and
 * rate-limited sign-in attempts. Nobody signs up: admins create users (`toolsmith user add`); an OIDC issuer's
 * users get an account with TOOLSMITH_OIDC_DEFAULT_ROLE on their first sign-in.
 *
 * One instance per process and database (the web server; the CLI for links and users), built lazily.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { betterAuth } from 'better-auth';
import { prismaAdapter } from 'better-auth/adapters/prisma';
import { genericOAuth } from 'better-auth/plugins/generic-oauth';
import { magicLink } from 'better-auth/plugins/magic-link';
import { config } from '../config.ts';
import { CLIENT_ADDRESS_HEADER } from '../http/client-address.ts';
import { oidcGate, refuseDisabledSessions } from './access-policy.ts';
import type { Database } from '../db/client.ts';

/** The provider id of the configured OIDC issuer (its callback: /api/auth/callback/oidc). */
export const OIDC_PROVIDER = 'oidc';
/** How long a one-time sign-in link stays valid. */
export const SIGN_IN_LINK_MINUTES = 30;

/** The secret that signs cookies: TOOLSMITH_AUTH_SECRET, or one generated once into the data folder (0600). */
export function authSecret(): string {
  const c = config();
  if (c.authSecret) return c.authSecret;
  const file = path.join(c.dataDir, 'auth-secret');
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    fs.mkdirSync(c.dataDir, { recursive: true });
    const s = crypto.randomBytes(32).toString('base64url');
    try {
      fs.writeFileSync(file, s, { mode: 0o600, flag: 'wx' });
      return s;
    } catch {
      return fs.readFileSync(file, 'utf8').trim(); // another process wrote it first
    }
  }
}

/** Links made by signInMagicLink, by email, for the caller that asked (the CLI prints them; nothing is mailed). */
const pendingLinks = new Map<string, string>();

/** The public URL, and for a local one its other loopback spellings (a browser may open 127.0.0.1 for localhost). */
function trusted(publicUrl: string): string[] {
  const u = new URL(publicUrl);
  if (!['localhost', '127.0.0.1', '[::1]'].includes(u.hostname)) return [publicUrl];
  return ['localhost', '127.0.0.1', '[::1]'].map((h) => `${u.protocol}//${h}${u.port ? `:${u.port}` : ''}`);
}

function build(db: Database) {
  const c = config();
  const secure = c.publicUrl.startsWith('https://');
  return betterAuth({
    appName: 'Toolsmith',
    baseURL: c.publicUrl,
    basePath: '/api/auth',
    secret: authSecret(),
    trustedOrigins: trusted(c.publicUrl),
    database: prismaAdapter(db.prisma, { provider: db.dialect === 'sqlite' ? 'sqlite' : 'postgresql' }),
    emailAndPassword: { enabled: true, disableSignUp: true, minPasswordLength: 10, maxPasswordLength: 256 },
    // Passwords change through auth.changePassword (limited wrong tries, the other sessions ended) or an admin's reset.
    disabledPaths: ['/change-password', '/set-password'],
    user: {
      additionalFields: { role: { type: 'string', required: false, defaultValue: 'viewer', input: false } },
      // What an OIDC identity may become or attach to: allowed domains, linking by email only when the operator
      // turned it on and never onto an admin (server/auth/access-policy.ts).
      validateUserInfo: oidcGate(db, OIDC_PROVIDER, () => c.oidc),
    },
    // A new OIDC identity whose email matches an existing account is refused unless TOOLSMITH_OIDC_LINK_BY_EMAIL.
    account: {
      accountLinking: { enabled: Boolean(c.oidc?.linkByEmail), disableImplicitLinking: !c.oidc?.linkByEmail },
    },
    session: { expiresIn: 7 * 24 * 3600, updateAge: 24 * 3600 },
    rateLimit: {
      enabled: true,
      storage: 'database',
      modelName: 'rateLimit',
      window: 60,
      max: 200,
      // Sign-in attempts per client address: a password guesser gets 5 a minute (and growing delays per address and
      // per account after repeated failures, from all web servers together: server/http/sign-in-throttle.ts).
      customRules: {
        '/sign-in/email': { window: 60, max: 5 },
        '/sign-in/magic-link': { window: 60, max: 5 },
        '/magic-link/verify': { window: 60, max: 10 },
      },
    },
    advanced: {
      useSecureCookies: secure,
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax', secure },
      // The address scripts/web-server.mjs recorded (the socket's peer, or a trusted proxy's X-Forwarded-For);
      // never a header the client sets (server/http/client-address.ts).
      ipAddress: { ipAddressHeaders: [CLIENT_ADDRESS_HEADER] },
    },
    databaseHooks: {
      user: {
        create: {
          // Better Auth creates users only for an OIDC issuer's first sign-in (sign-up is off; admins create the
          // rest directly): those get the configured default role.
          before: async (user) => ({ data: { ...user, role: c.oidc?.defaultRole ?? 'viewer' } }),
        },
      },
      // A disabled or removed user gets no session, whichever way they sign in.
      session: { create: { before: refuseDisabledSessions(db, `${c.publicUrl}/sign-in`) } },
    },
    plugins: [
      magicLink({
        expiresIn: SIGN_IN_LINK_MINUTES * 60,
        disableSignUp: true,
        storeToken: 'hashed',
        sendMagicLink: ({ email, url }) => {
          pendingLinks.set(email.toLowerCase(), url);
        },
      }),
      ...(c.oidc
        ? [
            genericOAuth({
              config: [
                {
                  providerId: OIDC_PROVIDER,
                  name: c.oidc.name,
                  discoveryUrl: `${c.oidc.issuer}/.well-known/openid-configuration`,
                  clientId: c.oidc.clientId,
                  clientSecret: c.oidc.clientSecret,
                  scopes: ['openid', 'email', 'profile'],
                },
              ],
            }),
          ]
        : []),
    ],
  });
}

export type Auth = ReturnType<typeof build>;

const instances = new WeakMap<Database, Auth>();

export function getAuth(db: Database): Auth {
  let a = instances.get(db);
  if (!a) {
    a = build(db);
    instances.set(db, a);
  }
  return a;
}

/**
 * A one-time sign-in URL for `email` (valid SIGN_IN_LINK_MINUTES, single use): what the first start prints and
 * `toolsmith user reset-link` makes. Nothing is sent anywhere; the caller shows it to whoever may have it.
 */
export async function signInLink(db: Database, email: string, callbackURL = '/'): Promise<string> {
  const key = email.toLowerCase();
  pendingLinks.delete(key);
  // A used-up link, or one for a user disabled since, lands on the sign-in page with the reason.
  await getAuth(db).api.signInMagicLink({
    body: { email: key, callbackURL, errorCallbackURL: '/sign-in' },
    headers: new Headers(),
  });
  const url = pendingLinks.get(key);
  pendingLinks.delete(key);
  if (!url) throw new Error(`no sign-in link was made for ${email}`);
  return url;
}
