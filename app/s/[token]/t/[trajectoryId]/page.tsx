import type { Metadata } from 'next';
import { SharedTrajectoryPage } from '@/components/shared/shared-trajectory-page.tsx';
import { safeDecode } from '@/lib/safe-decode.ts';

export const metadata: Metadata = {
  title: 'Shared trajectory · Toolsmith',
  robots: { index: false, follow: false },
  referrer: 'no-referrer',
};

/** /s/<token>/t/<trajectoryId> — one trajectory of a shared run or step, read-only. */
export default async function SharedTrajectoryRoute({
  params,
}: {
  params: Promise<{ token: string; trajectoryId: string }>;
}) {
  const { token, trajectoryId } = await params;
  return <SharedTrajectoryPage token={safeDecode(token)} trajectoryId={safeDecode(trajectoryId)} />;
}
