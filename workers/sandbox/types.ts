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
}

export interface RunOptions {
  /** Absolute deadline (epoch ms) covering queue time and run time; past it the call returns `timeout` or `internal`. */
  deadline?: number;
  signal?: AbortSignal;
}

export interface Sandbox {
  run(call: SandboxCall, opts?: RunOptions): Promise<SandboxResult>;
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
