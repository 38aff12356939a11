// TypeScript side of the trainer RPC (workers/trainer/trainer.py; its docstring is the protocol reference).
// One long-lived `.venv/bin/python -u trainer.py` process speaking JSON lines over stdio; requests are answered in
// order, one at a time on the Python side, but several may be in flight here (each has its own id and timeout).
// It is the Trainer (types.ts) of every transport: with N ranks this starts the N processes itself (rankEnv: a static rendezvous through a FileStore in a private
// folder, loopback only; no torchrun, no elastic agent, no store on a socket); rank 0 speaks the RPC, the others'
// stderr joins the tail, and the group lives and dies together. With `ray` it starts ray_group.py instead, which
// places the ranks on a Ray cluster as actors and speaks the same protocol (the group dies with that process).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type {
  ExportOnnxOptions,
  CallOptions,
  EvalMetrics,
  ExportResult,
  InitParams,
  LoadParams,
  LogprobsParams,
  OptimConfig,
  PolicyMetrics,
  PolicyParams,
  RankPlacement,
  SftMetrics,
  SftParams,
  Trainer,
  TrainerInfo,
} from './types.ts';
import { trainerPython } from './python.ts';

export const TRAINER_SCRIPT = path.join(import.meta.dirname, 'trainer.py');
/** The Ray transport's driver: places the ranks as actors and relays the protocol (ray_group.py's docstring). */
export const RAY_GROUP_SCRIPT = path.join(import.meta.dirname, 'ray_group.py');

/**
 * A failed trainer call. `type`: what trainer.py reports ('bad_request', 'nan_loss', 'oom', 'not_initialised',
 * 'internal'), or, from this client, 'exited' (the process died; `stderr` holds its last ~2 KB), 'timeout'
 * (no answer within timeoutMs; the process keeps running and a late answer is dropped), 'start' (it never came up).
 */
export class TrainerError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly stderr?: string,
  ) {
    super(message);
    this.name = 'TrainerError';
  }
}

export interface TrainerStartOptions {
  python?: string;
  script?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** How long to wait for the ready line (importing torch takes a second or two). Default 60 s. */
  startTimeoutMs?: number;
  /** Ranks on this machine: > 1 starts N processes that form one group (FSDP2; gloo on CPU). Default 1. */
  ranks?: number;
  /** Milliseconds the other ranks get to exit by themselves once one has exited cleanly (code 0). Default 5000. */
  groupExitGraceMs?: number;
  /** Place the ranks on a Ray cluster instead (ranks above is then ignored): see RayPlacement. */
  ray?: RayPlacement;
}

/**
 * A trainer group on a Ray cluster (ray_group.py): `nodes` × `ranks` ranks, each with `cpus` CPUs and `gpus` GPUs.
 * The cluster is the one RAY_ADDRESS names in the environment (inside a Ray job: that job's cluster); with token
 * authentication the environment carries RAY_AUTH_MODE=token and RAY_AUTH_TOKEN_PATH, never argv.
 */
export interface RayPlacement {
  nodes: number;
  ranks: number;
  cpus: number;
  gpus: number;
  /** Seconds to wait for the bundles to be placed before failing with what is missing. */
  timeoutS: number;
  /** Ray namespace of the actors (a run's id: its actors are found and listed by it). */
  namespace?: string;
}

/** Variables of this process that the ranks of a Ray group get (the rest is each node's own environment). */
const RANK_ENV = /^(TOOLSMITH_TRAINER_|OMP_|MKL_|TORCH_|HF_|TRANSFORMERS_|NCCL_|GLOO_|MALLOC_)/;

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: TrainerError) => void;
  timer?: NodeJS.Timeout;
}

const STDERR_TAIL = 2048;

/**
 * The environment of rank `rank` of `ranks`: the variables torch.distributed and dist.py read, the FileStore the
 * group meets in (a file in `storeDir`, a 0700 folder: no socket, no pickled rendezvous state), loopback for gloo's
 * and NCCL's own connections, and this process's pid so that a rank dies with it (lifeline.die_with_parent: Linux ties
 * that to the thread that spawned the rank, so start trainers from the main thread, not a worker thread).
 */
export function rankEnv(rank: number, ranks: number, storeDir: string | null): Record<string, string> {
  const env: Record<string, string> = {
    RANK: String(rank),
    LOCAL_RANK: String(rank),
    WORLD_SIZE: String(ranks),
    LOCAL_WORLD_SIZE: String(ranks),
    GROUP_RANK: '0',
    GLOO_SOCKET_IFNAME: 'lo',
    NCCL_SOCKET_IFNAME: 'lo',
    MASTER_ADDR: '127.0.0.1',
    TOOLSMITH_TRAINER_PARENT_PID: String(process.pid),
  };
  if (storeDir) env.TOOLSMITH_TRAINER_STORE = path.join(storeDir, 'rendezvous');
  return env;
}

/**
 * glibc returns big freed blocks to the OS at once (mmap/trim), so every step's activations page-fault anew: ~30% of
 * a step in the kernel. Keeping them in the heap removes that.
 */
const MALLOC_ENV = { MALLOC_MMAP_THRESHOLD_: '33554432', MALLOC_TRIM_THRESHOLD_: '4294967296' };

/** Transport: `ranks` processes of trainer.py on this machine (rank 0 speaks the RPC), all started or none. */
function spawnLocalRanks(
  python: string,
  ranks: number,
  storeDir: string | null,
  opts: TrainerStartOptions,
): ChildProcess[] {
  const procs: ChildProcess[] = [];
  try {
    for (let rank = 0; rank < ranks; rank++) {
      procs.push(
        spawn(python, ['-u', opts.script ?? TRAINER_SCRIPT], {
          // Rank 0 speaks the RPC; the others read nothing and write only logs (stdout is pointed at stderr by rpc.py).
          stdio: rank === 0 ? ['pipe', 'pipe', 'pipe'] : ['ignore', 'ignore', 'pipe'],
          cwd: opts.cwd,
          // Each rank of a group leads its own process group, so that killGroup takes down whatever it started too.
          detached: ranks > 1,
          env: {
            ...MALLOC_ENV,
            ...(opts.env ?? process.env),
            ...rankEnv(rank, ranks, storeDir),
            PYTHONUNBUFFERED: '1',
            PYTHONDONTWRITEBYTECODE: '1',
          },
        }),
      );
    }
  } catch (e) {
    for (const p of procs)
      try {
        p.kill('SIGKILL');
      } catch {
        /* gone */
      }
    throw e;
  }
  return procs;
}

/**
 * Transport: ray_group.py, which places the ranks on the Ray cluster and speaks the RPC for rank 0. The ranks get
 * RANK_ENV's variables of this process (the rest is their node's own environment).
 */
function spawnRayDriver(python: string, placement: RayPlacement, opts: TrainerStartOptions): ChildProcess {
  const base = opts.env ?? process.env;
  const forRanks = Object.fromEntries(
    Object.entries({ ...MALLOC_ENV, ...base }).filter(([k, v]) => RANK_ENV.test(k) && v !== undefined),
  );
  const spec = { ...placement, timeout_s: placement.timeoutS, script: opts.script, env: forRanks };
  return spawn(python, ['-u', RAY_GROUP_SCRIPT, JSON.stringify(spec)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    cwd: opts.cwd ?? import.meta.dirname,
    env: { ...base, TOOLSMITH_TRAINER_PARENT_PID: String(process.pid), PYTHONUNBUFFERED: '1' },
  });
}

export class TrainerClient implements Trainer {
  private buf = '';
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private stderrBuf = '';
  private readonly partial: string[];
  private exitInfo: string | null = null;
  private killTimer?: NodeJS.Timeout;
  readonly exited: Promise<void>;
  /** What the ready line said: torch version and whether CUDA is visible. */
  ready: { torch_version: string; cuda: boolean; pid: number; world_size: number } | null = null;
  /** Where the cluster placed each rank (the Ray transport's first line), else null. */
  placement: RankPlacement[] | null = null;

  /** procs[0] is rank 0 (stdin/stdout piped: the RPC); the others have only stderr piped. */
  private constructor(
    private readonly procs: ChildProcess[],
    private readonly storeDir: string | null,
    private readonly groupExitGraceMs: number,
  ) {
    let markExited!: () => void;
    this.exited = new Promise<void>((r) => {
      markExited = r;
    });
    this.partial = procs.map(() => '');
    const main = procs[0]!;
    main.stdout!.setEncoding('utf8');
    main.stdout!.on('data', (d: string) => {
      this.buf += d;
      let nl: number;
      while ((nl = this.buf.indexOf('\n')) !== -1) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.onLine(line);
      }
    });
    main.stdin!.on('error', () => {});
    let running = procs.length;
    procs.forEach((proc, rank) => {
      proc.stderr!.setEncoding('utf8');
      proc.stderr!.on('data', (d: string) => this.onStderr(rank, d));
      proc.on('error', (e) => {
        this.die(`could not run the trainer: ${e.message}`);
        this.killGroup();
      });
      proc.on('exit', (code, signal) => {
        // A rank left alone would wait in a collective for the one that is gone: the group goes down together
        // (after a clean exit, the others are given a moment to finish theirs).
        if (code === 0) this.killTimer ??= setTimeout(() => this.killGroup(), this.groupExitGraceMs);
        else this.killGroup();
        // Its last words (a traceback) may still be in the pipe: report once stderr is drained, or soon anyway.
        let done = false;
        const finish = () => {
          if (done) return;
          done = true;
          if (rank > 0 && this.partial[rank]) this.onStderr(rank, '\n');
          const how = signal ?? `code ${code}`;
          this.die(rank === 0 ? `the trainer exited (${how})` : `rank ${rank} of the trainer exited (${how})`);
          if (--running === 0) {
            clearTimeout(this.killTimer);
            if (this.storeDir) fs.rmSync(this.storeDir, { recursive: true, force: true });
            markExited();
          }
        };
        proc.once('close', finish);
        setTimeout(finish, 250).unref();
      });
    });
  }

  /** Every rank's stderr into one tail; lines of ranks other than 0 are marked with their rank. */
  private onStderr(rank: number, d: string) {
    if (rank === 0) {
      this.stderrBuf = (this.stderrBuf + d).slice(-STDERR_TAIL);
      return;
    }
    const text = this.partial[rank] + d;
    const nl = text.lastIndexOf('\n');
    this.partial[rank] = text.slice(nl + 1).slice(-STDERR_TAIL);
    if (nl < 0) return;
    const lines = text
      .slice(0, nl)
      .split('\n')
      .map((l) => `[rank ${rank}] ${l}\n`)
      .join('');
    this.stderrBuf = (this.stderrBuf + lines).slice(-STDERR_TAIL);
  }

  /** Spawn the trainer and wait until it has imported torch and is ready for requests. */
  static async start(opts: TrainerStartOptions = {}): Promise<TrainerClient> {
    const python = opts.python ?? trainerPython();
    if (!fs.existsSync(python))
      throw new TrainerError(
        'start',
        `no trainer interpreter at ${python}: run node scripts/setup.mjs (it builds the trainer's virtual environment), or set TOOLSMITH_TRAINER_PYTHON`,
      );
    const ranks = opts.ray ? 1 : (opts.ranks ?? 1);
    if (!Number.isInteger(ranks) || ranks < 1)
      throw new TrainerError('start', `ranks: expected a positive integer, not ${ranks}`);
    // mkdtemp makes the folder 0700: only this user can reach the FileStore the ranks meet in.
    const storeDir = ranks > 1 ? fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-trainer-')) : null;
    let procs: ChildProcess[];
    try {
      procs = opts.ray ? [spawnRayDriver(python, opts.ray, opts)] : spawnLocalRanks(python, ranks, storeDir, opts);
    } catch (e) {
      if (storeDir) fs.rmSync(storeDir, { recursive: true, force: true });
      throw e;
    }
    const c = new TrainerClient(procs, storeDir, opts.groupExitGraceMs ?? 5000);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new TrainerError('start', 'the trainer did not become ready in time', c.stderrTail));
        c.killGroup();
      }, opts.startTimeoutMs ?? 60_000);
      c.onReady = () => {
        clearTimeout(timer);
        resolve();
      };
      c.onDeath = (why) => {
        clearTimeout(timer);
        reject(new TrainerError('start', `${why} during start-up`, c.stderrTail));
      };
    });
    c.onReady = c.onDeath = undefined;
    return c;
  }

  private onReady?: () => void;
  private onDeath?: (why: string) => void;

  /** Rank 0's process id. */
  get pid(): number | undefined {
    return this.procs[0]!.pid;
  }
  /** Every rank's process id, rank 0 first. */
  get pids(): number[] {
    return this.procs.map((p) => p.pid!).filter((p) => p !== undefined);
  }
  get alive(): boolean {
    return this.exitInfo === null;
  }
  /** The last ~2 KB the trainer wrote to stderr (logs, tracebacks). */
  get stderrTail(): string {
    return this.stderrBuf;
  }

  private onLine(line: string) {
    let msg: {
      id?: number;
      result?: unknown;
      error?: { type: string; message: string };
      ready?: boolean;
      torch_version?: string;
      cuda?: boolean;
      pid?: number;
      world_size?: number;
      placement?: RankPlacement[];
    };
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (Array.isArray(msg.placement)) {
      this.placement = msg.placement;
      return;
    }
    if (msg.ready) {
      this.ready = {
        torch_version: msg.torch_version ?? '',
        cuda: !!msg.cuda,
        pid: msg.pid ?? 0,
        world_size: msg.world_size ?? 1,
      };
      this.onReady?.();
      return;
    }
    const p = typeof msg.id === 'number' ? this.pending.get(msg.id) : undefined;
    if (!p) return; // an answer to a call that already timed out
    this.pending.delete(msg.id!);
    if (p.timer) clearTimeout(p.timer);
    if (msg.error) p.reject(new TrainerError(msg.error.type, msg.error.message));
    else p.resolve(msg.result);
  }

  private die(why: string) {
    if (this.exitInfo !== null) return;
    this.exitInfo = why;
    this.onDeath?.(why);
    for (const p of this.pending.values()) {
      if (p.timer) clearTimeout(p.timer);
      p.reject(new TrainerError('exited', `${why}; stderr: ${this.stderrBuf.trim() || '(none)'}`, this.stderrBuf));
    }
    this.pending.clear();
  }

  /** One request. Rejects with a TrainerError (see its `type`). */
  call<T>(method: string, params: object = {}, opts: CallOptions = {}): Promise<T> {
    if (this.exitInfo !== null)
      return Promise.reject(
        new TrainerError('exited', `${this.exitInfo}; stderr: ${this.stderrBuf.trim() || '(none)'}`, this.stderrBuf),
      );
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const p: Pending = { resolve: resolve as (v: unknown) => void, reject };
      if (opts.timeoutMs !== undefined) {
        p.timer = setTimeout(() => {
          this.pending.delete(id);
          reject(new TrainerError('timeout', `${method} got no answer within ${opts.timeoutMs} ms`));
        }, opts.timeoutMs);
      }
      this.pending.set(id, p);
      this.procs[0]!.stdin!.write(JSON.stringify({ id, method, params }) + '\n');
    });
  }

  init(p: InitParams, o?: CallOptions) {
    return this.call<TrainerInfo>('init', p, o);
  }
  load(p: LoadParams, o?: CallOptions) {
    return this.call<TrainerInfo>('load', p, o);
  }
  /** A checkpoint directory (HF weights + optimiser through DCP + trainer state), swapped in whole. */
  save(dir: string, o?: CallOptions) {
    return this.call<{ path: string; bytes: number; step: number }>('save', { path: dir }, o);
  }
  /** The model's tokenizer files (tokenizer.json, tokenizer_config.json, ...) as text. */
  async tokenizerFiles(o?: CallOptions) {
    return (await this.call<{ files: Record<string, string> }>('tokenizer', {}, o)).files;
  }
  /** Cap the trainer's CPU threads (null: back to its own policy); TOOLSMITH_TRAINER_THREADS, when set, wins. */
  setThreads(threads: number | null, o?: CallOptions) {
    return this.call<{ threads: number | null }>('set_threads', { threads }, o);
  }
  resetOptimizer(o?: CallOptions) {
    return this.call<{ step: number }>('reset_optimizer', {}, o);
  }
  /** A stage's optimiser settings; the schedule restarts at the current step; `reset` also clears AdamW's moments. */
  setOptim(optim: OptimConfig, reset = false, o?: CallOptions) {
    return this.call<{ step: number; optim: Required<OptimConfig> }>('set_optim', { optim, reset }, o);
  }
  sftStep(p: SftParams, o?: CallOptions) {
    return this.call<SftMetrics>('sft_step', p, o);
  }
  evalLoss(p: SftParams, o?: CallOptions) {
    return this.call<EvalMetrics>('eval_loss', p, o);
  }
  async logprobs(p: LogprobsParams, o?: CallOptions) {
    return (await this.call<{ logprobs: (number | null)[][] }>('logprobs', p, o)).logprobs;
  }
  policyStep(p: PolicyParams, o?: CallOptions) {
    return this.call<PolicyMetrics>('policy_step', p, o);
  }
  exportOnnx(dir: string, o?: ExportOnnxOptions) {
    return this.call<ExportResult>('export_onnx', { dir, weights: o?.weights ?? 'float32' }, o);
  }
  /** The weights as a plain HF model directory (LoRA merged in): what from_pretrained, vLLM and SGLang load. */
  exportHf(dir: string, o?: CallOptions) {
    return this.call<ExportResult>('export_hf', { dir }, o);
  }
  info(o?: CallOptions) {
    return this.call<TrainerInfo>('info', {}, o);
  }
  /** sha256 over the model's state_dict (weights bit-identical ⇔ equal digests). */
  digest(o?: CallOptions) {
    return this.call<{ model: string; step: number }>('digest', {}, o);
  }

  /** SIGKILL every rank that is still running (with whatever each started: ranks of a group lead their own). */
  private killGroup() {
    for (const p of this.procs) {
      if (p.exitCode !== null || p.signalCode !== null || !p.pid) continue;
      try {
        if (this.procs.length > 1) process.kill(-p.pid, 'SIGKILL');
        else p.kill('SIGKILL');
      } catch {
        p.kill('SIGKILL');
      }
    }
  }

  /** Ask the trainer to shut down; SIGKILL it if it has not exited after graceMs. */
  async close(graceMs = 3000): Promise<void> {
    if (this.exitInfo !== null) return;
    this.call('shutdown').catch(() => {});
    this.procs[0]!.stdin!.end();
    const timer = setTimeout(() => this.killGroup(), graceMs);
    await this.exited;
    clearTimeout(timer);
  }
}
