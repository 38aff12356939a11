/**
 * A peer for bench:sandbox when one runs: rStar2-Agent's code-judge (a public repository without a licence, not on
 * PyPI: never copied here, only called). Its documented API: POST {url}/run with {type: "python", solution, input?}
 * answers {run_success, success, cost, reason ('' | 'worker_timeout' | 'queue_timeout' | 'internal_error'),
 * stdout, stderr}. How to start one: docs/benchmarks.md "Beside a real peer".
 */
import type { PeerOutcome } from './llm-sandbox.ts';

export async function codeJudgeRun(url: string, code: string, timeoutS = 4): Promise<PeerOutcome> {
  const res = await fetch(`${url.replace(/\/+$/, '')}/run`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'python', solution: code }),
    signal: AbortSignal.timeout((timeoutS + 30) * 1000),
  });
  if (!res.ok) return { status: 'error', stdout: '', stderr: `HTTP ${res.status}`, exitCode: null };
  const r = (await res.json()) as { run_success?: boolean; reason?: string; stdout?: string; stderr?: string };
  const status = r.run_success ? 'ok' : r.reason === 'worker_timeout' ? 'timeout' : 'error';
  return { status, stdout: r.stdout ?? '', stderr: r.stderr ?? r.reason ?? '', exitCode: r.run_success ? 0 : null };
}

/** Whether a code-judge answers at `url` (one trivial run). */
export async function codeJudgeUp(url: string): Promise<boolean> {
  try {
    return (await codeJudgeRun(url, 'print(1+1)\n')).stdout === '2\n';
  } catch {
    return false;
  }
}
