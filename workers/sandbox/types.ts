/** The code environment's one interface: the workers call `run`/`runBatch` and do not know what is behind it. */
import type { CallStatus } from '../../contracts/trajectory.ts';

export interface SandboxCall {
  code: string;
  /** Fed to the program's stdin. */
  input?: string;
  /** Wall-clock limit for the code itself, seconds (default 4, as the report). */
  timeoutS?: number;
  /** Address-space limit, MiB (default 1024). */
  memoryMb?: number;
  /** Cap on captured stdout and on stderr, bytes each (default 1 MiB). */
  maxOutputBytes?: number;
  /** Session mode: code of the trajectory's earlier calls, replayed quietly first to rebuild their variables. */
  history?: string[];
  /** Seed for Python's random, numpy's global generator and unseeded default_rng(); absent: fresh entropy. */
  seed?: number;
}

export interface SandboxResult {
  status: CallStatus;
  stdout: string;
  stderr: string;
  exitCode: number | null;
  errorType: string | null;
  errorLine: number | null;
  errorMessage: string | null;
  /** Time the code ran, ms. */
  durationMs: number;
  /** Time the call waited for a free interpreter, ms. */
  queueMs: number;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  /** A session's call (Sandbox.openSession): it ran in a new interpreter (the session's first call, or the first
   *  after the last one ended). */
  sessionNew?: boolean;
  /** A session's call: it ended the session (a limit, or the interpreter died): the next call starts a new one. */
  sessionEnded?: boolean;
}

export interface RunOptions {
  /** Absolute deadline (epoch ms) covering queue time and run time; past it the call returns `timeout` or `internal`. */
  deadline?: number;
  signal?: AbortSignal;
}

/** A trajectory's interpreter (the recipe's `tool.session: "trajectory"`): its calls share variables, imports and
 *  files in /tmp, nothing with any other session or call; its memory and time limits cover all its calls. */
export interface SandboxSession {
  /** One call at a time. `history` and `seed` as for Sandbox.run; `timeoutS` is bounded by the session's time left. */
  run(call: SandboxCall, opts?: RunOptions): Promise<SandboxResult>;
  /** End the session: its interpreter, processes and files are gone. */
  close(): Promise<void>;
}

export interface SessionOptions {
  /** The session's time: its calls' wall-clock time added up, and its interpreter's CPU time, seconds. */
  timeS?: number;
  /** Ended after this long without a call, seconds. */
  idleS?: number;
}

export interface Sandbox {
  run(call: SandboxCall, opts?: RunOptions): Promise<SandboxResult>;
  /** A session of calls in one interpreter; absent where the code environment has none (a remote one). */
  openSession?(opts?: SessionOptions): SandboxSession;
  /** Results in the order of `calls`; each call is independent (one failing does not fail the batch). */
  runBatch(calls: SandboxCall[], opts?: RunOptions): Promise<SandboxResult[]>;
  close(): Promise<void>;
}

export function internalResult(message: string, queueMs = 0): SandboxResult {
  return {
    status: 'internal',
    stdout: '',
    stderr: message,
    exitCode: null,
    errorType: 'SandboxInternal',
    errorLine: null,
    errorMessage: message,
    durationMs: 0,
    queueMs,
    stdoutTruncated: false,
    stderrTruncated: false,
  };
}
