/**
 * Reward of a finished trajectory (docs/method.md §4): 1 when the answer in the model's own text is equivalent to the gold
 * answer, else 0. Only model-generated text is searched: a `\boxed{}` printed by the tool is not the model's answer.
 */
import type { Verifier } from '../reward/verifier.ts';
import type { Verdict, Trajectory } from '../../contracts/trajectory.ts';

export const modelText = (t: Trajectory) => t.turns.map((x) => x.text).join('');

export interface Scored {
  reward: number;
  correct: boolean;
  verdict: Verdict;
}

/** `problem`: the question, so that an answer repeating it earns nothing (reward-hacking guard). */
export async function scoreTrajectory(
  t: Trajectory,
  gold: string,
  verifier: Verifier,
  problem?: string,
): Promise<Scored> {
  const verdict = await verifier.verify(gold, modelText(t), { bare: false, problem });
  return { reward: verdict.correct ? 1 : 0, correct: verdict.correct, verdict };
}
