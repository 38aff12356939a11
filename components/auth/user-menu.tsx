'use client';
import { useQuery } from '@tanstack/react-query';
import { usePathname } from 'next/navigation';
import { useTRPC } from '@/lib/trpc.ts';
import { isOpenPath } from './auth-gate.tsx';

/** The signed-in user and their role, and sign-out (Better Auth's /api/auth/sign-out ends the session in the database). */
export function UserMenu() {
  const trpc = useTRPC();
  const path = usePathname() ?? '/';
  const me = useQuery(
    trpc.auth.me.queryOptions(undefined, { enabled: !isOpenPath(path), staleTime: 60_000, retry: false }),
  );
  const user = me.data?.user;
  if (!user) return null;
  const signOut = async () => {
    await fetch('/api/auth/sign-out', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    window.location.href = '/sign-in';
  };
  return (
    <span className="row user-menu" style={{ marginLeft: 'auto', gap: 8 }}>
      <a className="muted" aria-label="Signed in as" href="/account" title="Your account: change your password">
        {user.email} · {user.role}
      </a>
      <button type="button" onClick={() => void signOut()}>
        Sign out
      </button>
    </span>
  );
}
