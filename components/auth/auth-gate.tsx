'use client';
import { useQuery } from '@tanstack/react-query';
import { usePathname, useRouter } from 'next/navigation';
import { useEffect, type ReactNode } from 'react';
import { useTRPC } from '@/lib/trpc.ts';

/** Pages anyone may open: the sign-in page and share links (which authorise themselves by their token). */
export const isOpenPath = (p: string) => p === '/sign-in' || p.startsWith('/s/');

/**
 * Signed-out visitors of any other page go to the sign-in page (and come back after). The API refuses them anyway
 * (401); this only spares them a page of errors.
 */
export function AuthGate({ children }: { children: ReactNode }) {
  const trpc = useTRPC();
  const path = usePathname() ?? '/';
  const router = useRouter();
  const open = isOpenPath(path);
  const me = useQuery(trpc.auth.me.queryOptions(undefined, { enabled: !open, staleTime: 60_000, retry: false }));
  const signedOut = !open && me.data && !me.data.user;
  useEffect(() => {
    if (signedOut) router.replace(`/sign-in?next=${encodeURIComponent(path)}`);
  }, [signedOut, path, router]);
  if (open) return <>{children}</>;
  if (!me.data)
    return me.error ? (
      <p className="error" role="alert">
        Could not reach the server: {me.error.message}
      </p>
    ) : (
      <p className="muted">Loading…</p>
    );
  if (!me.data.user) return <p className="muted">Redirecting to sign-in…</p>;
  return <>{children}</>;
}
