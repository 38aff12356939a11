import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { CallStatus } from '../../contracts/trajectory.ts';
import type { SandboxCall, SandboxResult } from './types.ts';

/** What the zygote answers for one call (snake_case, as zygote_classify.py writes it). */
export interface ZygoteReply {
  id: string;
  status: string;
  stdout: string;
  stderr: string;
  exit_code: number | null;
  error_type: string | null;
  error_line: number | null;
  error_message: string | null;
  duration_ms: number;
  stdout_truncated: boolean;
  stderr_truncated: boolean;
  /** A session's call (zygote_session.py): it opened a new session; it ended the session. */
  session_new?: boolean;
  session_ended?: boolean;
  pong?: boolean;
  leftover?: number;
  clean?: boolean;
}

/**
 * One zygote: a Python process (normally inside bubblewrap) speaking JSON lines. It serves one call at a time.
 * Request ids are random, so code running in the sandbox cannot forge a reply for a call it cannot see.
 * Emits 'exit' when the process dies, for whatever reason.
 */
export class ZygoteProcess extends EventEmitter {
  private proc: ChildProcessWithoutNullStreams;
  private buf = '';
  private waiting = new Map<string, (r: ZygoteReply) => void>();
  private stderrTail = '';
  readonly ready: Promise<void>;
  alive = true;

  /** `boot`: the first line sent, before any request (the zygote's modules and its syscall filter, bwrap.ts ZYGOTE_BOOT). */
  constructor(file: string, args: string[], boot: string) {
    super();
    this.proc = spawn(file, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' } as unknown as NodeJS.ProcessEnv,
    });
    this.proc.stdin.write(boot + '\n');
    let markReady!: () => void;
    let fail!: (e: Error) => void;
    this.ready = new Promise<void>((res, rej) => {
      markReady = res;
      fail = rej;
    });
    this.ready.catch(() => {});
    this.proc.stdout.setEncoding('utf8');
    this.proc.stdout.on('data', (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        let msg: ZygoteReply & { ready?: boolean };
        try {
          msg = JSON.parse(line);
        } catch {
          continue;
        }
        if (msg.ready) {
          markReady();
          continue;
        }
        const resolve = this.waiting.get(msg.id);
        if (resolve) {
          this.waiting.delete(msg.id);
          resolve(msg);
        }
      }
    });
    this.proc.stderr.setEncoding('utf8');
    this.proc.stderr.on('data', (d: string) => {
      this.stderrTail = (this.stderrTail + d).slice(-4000);
    });
    this.proc.stdin.on('error', () => {});
    this.proc.on('error', (e) => {
      fail(e);
      this.die();
    });
    this.proc.on('exit', () => {
      fail(
        new Error(
          `the sandbox interpreter exited during start-up: ${this.stderrTail.trim().split('\n').slice(-3).join(' | ') || 'no output'}`,
        ),
      );
      this.die();
    });
  }

  get pid() {
    return this.proc.pid;
  }
  get lastError() {
    return this.stderrTail;
  }

  private die() {
    if (!this.alive) return;
    this.alive = false;
    for (const resolve of this.waiting.values()) resolve(null as unknown as ZygoteReply);
    this.waiting.clear();
    this.emit('exit');
  }

  /** Send one request; resolves with the reply, or null if the zygote died first. */
  request(body: Record<string, unknown>): Promise<ZygoteReply | null> {
    if (!this.alive) return Promise.resolve(null);
    const id = randomBytes(16).toString('hex');
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.proc.stdin.write(JSON.stringify({ ...body, id }) + '\n');
    });
  }

  /** `extra`: the session fields of a session's call (zygote_session.py). */
  call(
    c: SandboxCall & { deadlineMs?: number },
    defaults: { timeoutS: number; memoryMb: number; maxOutputBytes: number; maxProcesses: number; maxFileMb: number },
    extra: Record<string, unknown> = {},
  ) {
    return this.request({
      ...extra,
      code: c.code,
      input: c.input ?? '',
      history: c.history ?? [],
      timeout: c.timeoutS ?? defaults.timeoutS,
      memory_mb: c.memoryMb ?? defaults.memoryMb,
      max_output: c.maxOutputBytes ?? defaults.maxOutputBytes,
      max_processes: defaults.maxProcesses,
      max_file_mb: defaults.maxFileMb,
      deadline_ms: c.deadlineMs,
      seed: c.seed ?? null,
    });
  }

  kill() {
    // bwrap --die-with-parent and the pid namespace take everything inside down with it.
    this.proc.kill('SIGKILL');
  }
}

/** A zygote's reply as the Sandbox interface's result (`queueMs`: how long the call waited to start). */
export function replyToResult(r: ZygoteReply, queueMs: number): SandboxResult {
  return {
    status: r.status as CallStatus,
    stdout: r.stdout ?? '',
    stderr: r.stderr ?? '',
    exitCode: r.exit_code ?? null,
    errorType: r.error_type ?? null,
    errorLine: r.error_line ?? null,
    errorMessage: r.error_message ?? null,
    durationMs: r.duration_ms ?? 0,
    queueMs,
    stdoutTruncated: Boolean(r.stdout_truncated),
    stderrTruncated: Boolean(r.stderr_truncated),
    ...(r.session_new === undefined ? {} : { sessionNew: r.session_new, sessionEnded: Boolean(r.session_ended) }),
  };
}
