/**
 * Math-Verify (HuggingFace's answer checker, PyPI `math-verify`) as the verifier's authoritative last step, run in
 * the code sandbox's isolation (a pool of its own, whose zygotes preload and warm math_verify), so that a slow or
 * hostile parse is ended by the sandbox's wall clock — not by signal.alarm, which Math-Verify uses for its own limits
 * and which is unsafe beside threads — and never stalls the caller: each check is an awaited call to another process.
 * Set-up installs it for the sandbox's interpreter (workers/reward/requirements-sandbox.txt).
 */
import fs from 'node:fs';
import type { PoolOptions } from '../sandbox/pool.ts';
import type { Sandbox } from '../sandbox/types.ts';

const CHECK_CODE = fs.readFileSync(new URL('./math_verify_check.py', import.meta.url), 'utf8');

/** The modules its zygotes preload (the zygote warms math_verify's parser when it is among them). */
export const MATH_VERIFY_PRELOAD = ['sympy', 'math_verify'];

/** The pool a composition root starts for it: one zygote by default (the fast path settles most pairs). */
export const MATH_VERIFY_POOL: PoolOptions = {
  size: 1,
  preload: MATH_VERIFY_PRELOAD,
  light: false,
  memoryMb: 1024,
  log: () => {},
};

export interface MathVerifyVerdict {
  /** null: Math-Verify gave no verdict (it could not parse the gold, failed, timed out, or is not installed). */
  equal: boolean | null;
  reason: string;
}

interface CheckResult {
  equal: boolean | null;
  gold: string | null;
  answer: string | null;
  error?: string;
}

export class MathVerify {
  /** Checks asked for (the tests and bench:verify count how many pairs reached the last step). */
  readonly stats = { checks: 0 };
  private constructor(private sandbox: Sandbox) {}

  /** Over a sandbox that closes with it (a pool started with MATH_VERIFY_POOL). */
  static owning(sandbox: Sandbox): MathVerify {
    return new MathVerify(sandbox);
  }

  /**
   * Does `answer` equal `gold` by Math-Verify? Both as extracted (Math-Verify normalises them itself): a formula is
   * read as LaTeX only, and a value of a fragment of it is no verdict (math_verify_check.py). `plain`: Math-Verify as
   * it is, on the texts as given (bench:verify's reference).
   */
  async check(gold: string, answer: string, timeLimitS: number, plain = false): Promise<MathVerifyVerdict> {
    this.stats.checks++;
    const res = await this.sandbox.run({
      code: CHECK_CODE,
      input: JSON.stringify({ pairs: [[gold, answer]], plain }),
      timeoutS: timeLimitS,
      memoryMb: 1024,
    });
    if (res.status !== 'ok') {
      const why =
        res.status === 'timeout'
          ? `no verdict within ${timeLimitS} s`
          : `${res.status}: ${(res.errorMessage ?? res.stderr).slice(0, 200)}`;
      return { equal: null, reason: `Math-Verify ${why}` };
    }
    let r: CheckResult | undefined;
    try {
      r = (JSON.parse(res.stdout.trim().split('\n').pop()!) as { results: CheckResult[] }).results[0];
    } catch {
      /* below */
    }
    if (!r) return { equal: null, reason: `Math-Verify printed no verdict: ${res.stdout.slice(0, 200)}` };
    const parsed = `${r.gold ?? '∅'} vs ${r.answer ?? '∅'}`;
    if (r.equal === null) return { equal: null, reason: `Math-Verify: ${r.error ?? 'no verdict'} (${parsed})` };
    return {
      equal: r.equal,
      reason: `Math-Verify: ${r.equal ? 'equal' : 'not equal'} (${parsed})${r.error ? `; ${r.error}` : ''}`,
    };
  }

  async close(): Promise<void> {
    await this.sandbox.close();
  }
}
