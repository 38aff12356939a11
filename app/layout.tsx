import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import '@xterm/xterm/css/xterm.css';
import './globals.css';
import { Providers } from './providers.tsx';
import { AuthGate } from '@/components/auth/auth-gate.tsx';
import { AppHeader } from '@/components/layout/app-header.tsx';

// Every page renders per request: its scripts carry that response's CSP nonce (proxy.ts, server/http/gate.ts).
export const dynamic = 'force-dynamic';

export const metadata: Metadata = {
  title: 'Toolsmith',
  description: 'A workbench for agentic reinforcement learning with a Python tool',
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <Providers>
          <AppHeader />
          <main>
            <AuthGate>{children}</AuthGate>
          </main>
        </Providers>
      </body>
    </html>
  );
}
