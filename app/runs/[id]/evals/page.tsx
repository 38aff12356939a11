import { EvalsView } from '@/components/evals/evals-view.tsx';

/** /runs/<id>/evals — the run's evaluation results beside the rStar2-Agent report's reference table. */
export default async function RunEvalsPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  return <EvalsView runId={id} />;
}
