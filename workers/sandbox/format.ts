import type { ToolFormat } from '../../contracts/recipe.ts';
import type { SandboxResult } from './types.ts';

/**
 * How a tool result is shown to the model (docs/method.md §2). Pure.
 * - "paper": success is the raw stdout (the zygote already echoes a last expression's repr); failure is
 *   `tool call failed` and the reason (the traceback, or what limit was hit).
 * - "released": rStar2's code-judge text: `Tool call success|failure`, `reason:`, `stdout:`, `stderr:`,
 *   `execution time: 0.12s`, empty fields omitted.
 * Truncation: `maxFieldChars` cuts stdout and stderr each (code-judge: 1000); `middle` keeps the first `head`
 * and last `tail` characters of the whole text (verl: 128 + 128). Both off by default (the paper sets none).
 */

export const DEFAULT_TOOL_FORMAT: ToolFormat = { style: 'paper', maxFieldChars: null, middle: null };

export function failureReason(r: SandboxResult, timeoutS?: number): string | null {
  switch (r.status) {
    case 'ok':
      return null;
    case 'timeout':
      return r.errorType === 'QueueTimeout'
        ? 'queue timeout: the code environment was too busy to run the call in time'
        : `timeout: execution exceeded the time limit${timeoutS ? ` of ${timeoutS} s` : ''}`;
    case 'memory':
      return 'memory limit exceeded (MemoryError)';
    case 'output_limit':
      return 'output limit exceeded: the program printed too much and was stopped';
    case 'internal':
      return `internal error of the code environment: ${r.errorMessage ?? 'unknown'}`;
    case 'error':
      return r.errorType
        ? `${r.errorType}${r.errorMessage ? `: ${r.errorMessage}` : ''}`
        : `exit code ${r.exitCode ?? '?'}`;
  }
}

export function formatToolResult(r: SandboxResult, f: ToolFormat = DEFAULT_TOOL_FORMAT, timeoutS?: number): string {
  const cut = (s: string) =>
    f.maxFieldChars != null && s.length > f.maxFieldChars
      ? `${s.slice(0, f.maxFieldChars)}…[truncated ${s.length - f.maxFieldChars} chars]`
      : s;
  const stdout = cut(r.stdout);
  const stderr = cut(r.stderr);
  const reason = failureReason(r, timeoutS);
  let text: string;
  if (f.style === 'released') {
    const lines = [reason === null ? 'Tool call success' : 'Tool call failure'];
    if (reason !== null) lines.push(`reason: ${reason}`);
    if (stdout) lines.push(`stdout: ${stdout}`);
    if (stderr) lines.push(`stderr: ${stderr}`);
    lines.push(`execution time: ${(r.durationMs / 1000).toFixed(2)}s`);
    text = lines.join('\n');
  } else if (reason === null) {
    text = stdout;
  } else {
    // The traceback already names the error; other failures say which limit, with any partial output.
    const detail =
      r.status === 'error' || r.status === 'memory'
        ? stderr || reason
        : [reason, stdout, stderr].filter(Boolean).join('\n');
    text = `tool call failed\n${detail}`;
  }
  // A `trajectory` session that this call ended (a limit): the model must not count on its variables any more.
  if (r.sessionEnded) text += `\n${SESSION_ENDED_NOTE}`;
  return middleTruncate(text, f.middle ?? null);
}

export const SESSION_ENDED_NOTE =
  '(the session ended: its variables, imports and files are gone; the next call starts a new one)';

export function middleTruncate(text: string, middle: { head: number; tail: number } | null): string {
  if (!middle || text.length <= middle.head + middle.tail) return text;
  return `${text.slice(0, middle.head)}\n...(${text.length - middle.head - middle.tail} characters truncated)...\n${text.slice(text.length - middle.tail)}`;
}
