'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink } from '@trpc/client';
import { useState, type ReactNode } from 'react';
import type { AppRouter } from '@/server/trpc/root.ts';
import { TRPCProvider } from '@/lib/trpc.ts';
import { z } from 'zod';

// The page's CSP admits no eval: zod would probe `new Function` for its fast object parser, and the browser reports
// the probe as a violation even though zod catches it. Parsing in the browser does without the fast path.
z.config({ jitless: true });

export function Providers({ children }: { children: ReactNode }) {
  const [queryClient] = useState(() => new QueryClient({ defaultOptions: { queries: { staleTime: 1000, retry: 1 } } }));
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({
      links: [
        splitLink({
          condition: (op) => op.type === 'subscription',
          true: httpSubscriptionLink({ url: '/api/trpc' }),
          false: httpBatchLink({ url: '/api/trpc' }),
        }),
      ],
    }),
  );
  return (
    <QueryClientProvider client={queryClient}>
      <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
        {children}
      </TRPCProvider>
    </QueryClientProvider>
  );
}
