'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { UserMenu } from '../auth/user-menu.tsx';

/** Whether a path is a shared page (/s/<token>…): what a share link opens, outside the app. */
export function isSharedPath(pathname: string | null): boolean {
  return pathname === '/s' || (pathname?.startsWith('/s/') ?? false);
}

/**
 * The app's top bar. Shared pages get none: a share link opens only what it names, so its pages carry no way
 * into the workbench (the links would answer 401 anyway, but they would tell an outsider what is there).
 */
export function AppHeader() {
  const pathname = usePathname();
  if (isSharedPath(pathname)) return null;
  return (
    <header className="topbar">
      <Link href="/" className="brand">
        Toolsmith
      </Link>
      <nav aria-label="Main">
        <Link href="/">Dashboard</Link>
        <Link href="/recipes">Recipes</Link>
        <Link href="/compare">Compare</Link>
        <Link href="/datasets">Datasets</Link>
        <Link href="/models">Models</Link>
        <Link href="/system">System</Link>
      </nav>
      <UserMenu />
    </header>
  );
}
