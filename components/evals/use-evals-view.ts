'use client';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTRPC } from '@/lib/trpc.ts';
import { evalSteps } from './eval-rows.ts';

/** A run's evaluations (polled), the reference table, the step shown and the step it is paired against. */
export function useEvalsView(runId: string) {
  const trpc = useTRPC();
  const run = useQuery(trpc.runs.get.queryOptions({ runId }, { retry: false }));
  const evals = useQuery(
    trpc.evals.list.queryOptions({ runId }, { retry: false, refetchInterval: (q) => (q.state.error ? false : 10_000) }),
  );
  const ref = useQuery(trpc.evals.reference.queryOptions(undefined, { staleTime: Infinity }));
  const [pickedStep, setPickedStep] = useState<number | null>(null);
  const [againstStep, setAgainstStep] = useState<number | null>(null);

  const rows = evals.data ?? [];
  const steps = evalSteps(rows);
  const step = pickedStep !== null && steps.includes(pickedStep) ? pickedStep : steps[steps.length - 1];
  const atStep = rows.filter((r) => r.step === step);
  const others = steps.filter((s) => s !== step);
  const against = againstStep !== null && others.includes(againstStep) ? againstStep : others[0];
  return { run, evals, ref, rows, steps, step, setPickedStep, atStep, others, against, setAgainstStep };
}

export type EvalsState = ReturnType<typeof useEvalsView>;
export type EvalRow = EvalsState['rows'][number];
