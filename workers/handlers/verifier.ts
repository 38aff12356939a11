/**
 * The reward verifier as a recipe's `verifier` settings describe it (the report's behaviour by default), for the
 * composition roots (the train and eval jobs, `npx toolsmith verify` and `eval`): Math-Verify's own sandbox pool is
 * started only when the fast path first leaves a pair to it, and closes with the verifier.
 */
import { VerifierSettingsSchema, type Recipe } from '../../contracts/recipe.ts';
import { MathVerify, MATH_VERIFY_POOL } from '../reward/math-verify.ts';
import { Verifier, type VerifierOptions } from '../reward/verifier.ts';
import { SandboxPool } from '../sandbox/pool.ts';
import type { Sandbox } from '../sandbox/types.ts';

export type VerifierSettings = Recipe['verifier'];

export function verifierFromSettings(
  v: VerifierSettings = VerifierSettingsSchema.parse({}),
  sandbox: Sandbox | null = null,
  extra: VerifierOptions = {},
): Verifier {
  return new Verifier({
    sandbox: v.sympy ? sandbox : null,
    mode: v.mode,
    tolerance: v.tolerance,
    timeoutMs: v.timeLimitMs,
    sympyTimeoutS: v.sympyTimeLimitS,
    mathVerify: v.mathVerify,
    mathVerifyTimeLimitS: v.mathVerifyTimeLimitS,
    mathVerifier:
      v.mathVerify === 'off' ? null : async () => MathVerify.owning(await SandboxPool.start(MATH_VERIFY_POOL)),
    ...extra,
  });
}
