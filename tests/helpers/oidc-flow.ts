/**
 * A real OpenID Provider (panva's oidc-provider, certified) on a local port, and a browser's walk through its login
 * and consent pages up to the app's callback. Whoever signs in at the provider gets `sub` = the login typed, and the
 * email the test's `emailOf` gives it (verified: the IdP vouches for it, as a real one would for its own users).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TestIssuer {
  url: string;
  close: () => Promise<void>;
}

export async function startIssuer(
  appBase: string,
  emailOf: (login: string) => string,
  clientSecret = 'oidc-test-secret',
): Promise<TestIssuer> {
  const { default: Provider } = await import('oidc-provider');
  const srv = http.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  const oidc = new Provider(url, {
    clients: [
      {
        client_id: 'toolsmith',
        client_secret: clientSecret,
        redirect_uris: [`${appBase}/api/auth/callback/oidc`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    findAccount: async (_ctx: unknown, sub: string) => ({
      accountId: sub,
      claims: async () => ({ sub, email: emailOf(sub), email_verified: true, name: `User ${sub}` }),
    }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    pkce: { required: () => false },
  });
  srv.on('request', oidc.callback());
  return {
    url,
    close: () =>
      new Promise<void>((r) => {
        srv.closeAllConnections?.();
        srv.close(() => r());
      }),
  };
}

/** A tiny cookie jar for the provider's side of the browser. */
class Jar {
  private c = new Map<string, string>();
  take(r: Response) {
    for (const s of r.headers.getSetCookie()) {
      const [kv] = s.split(';');
      const i = kv!.indexOf('=');
      this.c.set(kv!.slice(0, i), kv!.slice(i + 1));
    }
  }
  get header() {
    return [...this.c].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

/**
 * From the provider's authorization URL, as a person would: fill the (development) login form with `login`, consent,
 * and follow redirects until the provider sends the browser to the app's callback; that callback URL.
 */
export async function walkProvider(authorizeUrl: string, appBase: string, login: string): Promise<string> {
  const jar = new Jar();
  const isCallback = (u: string) => u.startsWith(`${appBase}/api/auth/callback/oidc`);
  let url = authorizeUrl;
  for (let hop = 0; hop < 12; hop++) {
    const r = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header } });
    jar.take(r);
    if (r.status >= 300 && r.status < 400) {
      url = new URL(r.headers.get('location')!, url).toString();
      if (isCallback(url)) return url;
      continue;
    }
    const html = await r.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
    if (!action) throw new Error(`no form on ${url}: ${html.slice(0, 300)}`);
    const body = new URLSearchParams(
      /name="login"/.test(html) ? { prompt: 'login', login, password: 'any' } : { prompt: 'consent' },
    );
    const p = await fetch(new URL(action, url), {
      method: 'POST',
      redirect: 'manual',
      body,
      headers: { cookie: jar.header, 'content-type': 'application/x-www-form-urlencoded' },
    });
    jar.take(p);
    url = new URL(p.headers.get('location')!, url).toString();
    if (isCallback(url)) return url;
  }
  throw new Error('the provider never redirected back to the callback');
}
