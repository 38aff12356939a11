import type { Metadata } from 'next';
import { SharedView } from '@/components/shared/shared-view.tsx';
import { safeDecode } from '@/lib/safe-decode.ts';

export const metadata: Metadata = {
  title: 'Shared view · Toolsmith',
  robots: { index: false, follow: false },
  referrer: 'no-referrer',
};

/** /s/<token> — a share link, read-only: only share.view.* with this token. */
export default async function SharedPage({ params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  return <SharedView token={safeDecode(token)} />;
}
