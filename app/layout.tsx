import type { Metadata } from 'next';
import Link from 'next/link';
import type { ReactNode } from 'react';
import '@xterm/xterm/css/xterm.css';
import './globals.css';
import { Providers } from './providers.tsx';
import { AuthGate } from '@/components/auth/auth-gate.tsx';
import { UserMenu } from '@/components/auth/user-menu.tsx';

export const metadata: Metadata = {
  title: 'Toolsmith',
  description: 'A workbench for agentic reinforcement learning with a Python tool',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>
        <header className="topbar">
          <Link href="/" className="brand">Toolsmith</Link>
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
        <main>
          <AuthGate>{children}</AuthGate>
        </main>
        </Providers>
      </body>
    </html>
  );
}
