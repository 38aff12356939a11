'use client';
import { useQuery } from '@tanstack/react-query';
import { useSearchParams } from 'next/navigation';
import { Suspense, useState, type FormEvent } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { safeNextPath } from '@/lib/safe-next.ts';
import { signInErrorText } from '@/contracts/sign-in-errors.ts';

function SignIn() {
  const trpc = useTRPC();
  // Only same-site paths: a `next` parameter never sends anyone elsewhere after sign-in (lib/safe-next.ts).
  const next = safeNextPath(useSearchParams().get('next'));
  // Why a one-time link or single sign-on sent the browser back here (a disabled account, a refused OIDC link).
  const refused = signInErrorText(useSearchParams().get('error'));
  const me = useQuery(trpc.auth.me.queryOptions(undefined, { retry: false }));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent<HTMLFormElement>) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget);
    setBusy(true);
    setError(null);
    const r = await fetch('/api/auth/sign-in/email', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: String(form.get('email') ?? ''), password: String(form.get('password') ?? '') }),
    });
    setBusy(false);
    if (r.ok) {
      window.location.href = next;
      return;
    }
    const body = (await r.json().catch(() => ({}))) as { message?: string };
    setError(
      body.message ??
        (r.status === 429 ? 'Too many attempts: wait a minute and try again.' : `Sign-in failed (HTTP ${r.status}).`),
    );
  };

  const sso = async () => {
    const r = await fetch('/api/auth/sign-in/social', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ provider: 'oidc', callbackURL: next, errorCallbackURL: '/sign-in' }),
    });
    const body = (await r.json().catch(() => ({}))) as { url?: string; message?: string };
    if (r.ok && body.url) window.location.href = body.url;
    else setError(body.message ?? `Single sign-on failed (HTTP ${r.status}).`);
  };

  return (
    <div className="panel" style={{ maxWidth: 420, margin: '48px auto' }}>
      <h1>Sign in</h1>
      {me.data?.user && (
        <p className="muted">
          You are signed in as {me.data.user.email}. <a href={next}>Continue</a>
        </p>
      )}
      <form onSubmit={(e) => void submit(e)} aria-label="Sign in with email and password">
        <p>
          <label htmlFor="email">Email</label>
          <br />
          <input id="email" name="email" type="email" autoComplete="username" required style={{ width: '100%' }} />
        </p>
        <p>
          <label htmlFor="password">Password</label>
          <br />
          <input
            id="password"
            name="password"
            type="password"
            autoComplete="current-password"
            required
            style={{ width: '100%' }}
          />
        </p>
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      {me.data?.oidc && (
        <p>
          <button type="button" onClick={() => void sso()}>
            Sign in with {me.data.oidc.name}
          </button>
        </p>
      )}
      {(error ?? refused) && (
        <p className="error" role="alert">
          {error ?? refused}
        </p>
      )}
      <p className="muted" style={{ fontSize: 12.5 }}>
        No password? An admin can give you a one-time link: <code>npx toolsmith user reset-link EMAIL</code>.
      </p>
    </div>
  );
}

export default function SignInPage() {
  return (
    <Suspense fallback={null}>
      <SignIn />
    </Suspense>
  );
}
