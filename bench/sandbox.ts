/**
 * bench:sandbox — the warm-zygote pool (workers/sandbox) against a spawn-per-call baseline, in one run.
 *
 *   npx tsx bench/sandbox.ts [--quick] [--pool path/to/pool.ts] [--no-peer] [--peer-url URL]
 *
 * Snippets: (a) print(1+1), (b) a sympy snippet, (c) a numpy snippet, (d) a raised exception; each at
 * concurrency 1, 16 and 64, closed loop (c callers, each starts its next call when its last one answered).
 * Per cell: calls/s (completed calls / wall time of the cell), p50 and p99 latency as the caller sees it
 * (for the pool that includes the time a call waits for a free interpreter).
 *
 * Pool: SandboxPool.start({ bench: true }) — size = cores, isolation on (bubblewrap, per-call namespaces, cgroups,
 * seccomp; the bench refuses unsafe mode). First, one heavy zygote times what each isolation measure adds to a
 * call (pool.measureIsolation: forks with one more measure per row, the median of each).
 *
 * Baseline: the released rStar2-Agent / code-judge method, re-implemented here with child_process.spawn: write
 * source.py into a fresh temp dir, run `/usr/bin/python3 source.py` there in a new session / process group
 * (spawn detached => setsid), with RLIMIT_CPU = timeout, RLIMIT_AS = 1 GiB (the pool's default), core dumps off
 * — set with `prlimit` from util-linux, which sets the limits on itself and execs python (same pid, no extra
 * Python start-up) — and OPENBLAS_NUM_THREADS=1, a 4 s wall-clock timeout, and the process group killed
 * afterwards. No isolation (that is the released method); the pool runs with isolation on.
 *
 * Peer: llm-sandbox 0.3.46's bubblewrap backend (PyPI, MIT; new namespaces per command, a seccomp
 * denylist, no network, the host read-only; no memory or process limit by default), installed for the bench only
 * (bench/peers/llm-sandbox.ts), one session per concurrent caller, on the same snippets and concurrencies.
 * --no-peer leaves it out. --peer-url URL also measures a running rStar2 code-judge (bench/peers/code-judge.ts; not
 * on PyPI, it needs Redis: docs/benchmarks.md "Beside a real peer" says how to start one) on the same cells, in a table of its own.
 *
 * Every side runs the same number of calls per cell at the same concurrency, one after the other (pool first),
 * with a short warm-up. calls/s counts correct results only (a baseline call killed by its 4 s timeout when the
 * machine is overloaded is shown as timed out, and its latency is still counted). Every result is checked (status and stdout, the error type for (d)); a cell with a
 * wrong result is reported as FAILED so that a broken run cannot look fast.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { benchFlags } from './flags.ts';
import { LLM_SANDBOX, LlmSandboxPeer } from './peers/llm-sandbox.ts';
import { codeJudgeRun, codeJudgeUp } from './peers/code-judge.ts';
import { type Cell, expectOk, fmt, measure, type Outcome, pad, settle, type Snippet } from './sandbox-measure.ts';
import { measureSessions, printSessions } from './sandbox-sessions.ts';

// ───────────────────────────── options ─────────────────────────────

const flags = benchFlags(
  'bench:sandbox',
  'npx tsx bench/sandbox.ts [--quick] [--pool path/to/pool.ts] [--no-peer] [--peer-url URL]',
  {
    quick: 'boolean',
    pool: 'string',
    'no-peer': 'boolean',
    'peer-url': 'string',
  },
);
const JUDGE_URL = typeof flags['peer-url'] === 'string' ? flags['peer-url'] : null;
const WITH_PEER = !flags['no-peer'];
const QUICK = Boolean(flags.quick);
const POOL_MODULE =
  typeof flags.pool === 'string'
    ? path.resolve(flags.pool)
    : new URL('../workers/sandbox/pool.ts', import.meta.url).pathname;
const PYTHON = '/usr/bin/python3';
const TIMEOUT_S = 4;
const MEMORY_BYTES = 1024 * 1024 * 1024;
const CONCURRENCY = [1, 16, 64];

// ───────────────────────────── snippets ─────────────────────────────

const scale = (n: number) => (QUICK ? Math.max(4, Math.round(n / 4)) : n);

const SNIPPETS: Snippet[] = [
  {
    key: 'a',
    name: 'print(1+1)',
    code: 'print(1+1)\n',
    calls: { 1: scale(200), 16: scale(600), 64: scale(800) },
    check: expectOk('2\n'),
  },
  {
    key: 'b',
    name: 'sympy',
    code: "import sympy as sp\nx = sp.symbols('x')\nprint(sp.factor(x**2 - 1), sp.integrate(sp.sin(x)**2, x))\n",
    calls: { 1: scale(12), 16: scale(48), 64: scale(64) },
    check: expectOk('(x - 1)*(x + 1) x/2 - sin(x)*cos(x)/2\n'),
  },
  {
    key: 'c',
    name: 'numpy',
    code: 'import numpy as np\na = np.arange(12).reshape(3, 4)\nprint(int(a.sum()), float(np.linalg.norm(np.ones(4))), a.T.shape)\n',
    calls: { 1: scale(40), 16: scale(160), 64: scale(192) },
    check: expectOk('66 2.0 (4, 3)\n'),
  },
  {
    key: 'd',
    name: 'exception',
    code: "def f(n):\n    raise ValueError('boom %d' % n)\nf(3)\n",
    calls: { 1: scale(200), 16: scale(600), 64: scale(800) },
    check: (o, side) => {
      if (o.status !== 'error') return `status ${o.status}, want error`;
      if (o.stdout !== '') return `stdout ${JSON.stringify(o.stdout)}, want empty`;
      if (!o.stderr.includes('ValueError: boom 3'))
        return `stderr lacks the traceback: ${JSON.stringify(o.stderr.slice(-200))}`;
      if (side === 'pool' && o.errorType !== 'ValueError') return `errorType ${o.errorType}, want ValueError`;
      return null;
    },
  },
];

// ───────────────────────────── baseline ─────────────────────────────

/** One call the released way: temp dir, source.py, prlimit + python3 in its own process group, 4 s timeout. */
async function baselineCall(code: string): Promise<Outcome> {
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'bench-baseline-'));
  try {
    await fs.promises.writeFile(path.join(dir, 'source.py'), code);
    return await new Promise<Outcome>((resolve) => {
      const child = spawn(
        'prlimit',
        [`--cpu=${TIMEOUT_S}`, `--as=${MEMORY_BYTES}`, '--core=0', '--', PYTHON, 'source.py'],
        {
          cwd: dir,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, OPENBLAS_NUM_THREADS: '1' },
        },
      );
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let timedOut = false;
      const killGroup = () => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* already gone */
        }
      };
      const timer = setTimeout(() => {
        timedOut = true;
        killGroup();
      }, TIMEOUT_S * 1000);
      child.stdout.on('data', (d: Buffer) => out.push(d));
      child.stderr.on('data', (d: Buffer) => err.push(d));
      child.on('error', (e) => {
        clearTimeout(timer);
        resolve({ status: 'internal', stdout: '', stderr: String(e), exitCode: null });
      });
      child.on('close', (code, signal) => {
        clearTimeout(timer);
        killGroup(); // anything the program left behind in its group
        const status = timedOut ? 'timeout' : code === 0 ? 'ok' : signal ? `signal ${signal}` : 'error';
        resolve({
          status,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          exitCode: code,
        });
      });
    });
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true });
  }
}

// ───────────────────────────── measuring ─────────────────────────────

/** calls/s counts correct results only; a baseline call killed by its 4 s timeout (overload) is counted in
 *  `timeouts`, not as a bench failure: that is how the released method behaves when it runs out of CPU. */
// ───────────────────────────── main ─────────────────────────────

type Pool = import('../workers/sandbox/pool.ts').SandboxPool;
type Result = { s: Snippet; c: number; pool: Cell; base: Cell; peer: Cell | null };
type Judged = { s: Snippet; c: number; cell: Cell };
type IsolationCost = { measure: string; ms: number; sympyMs: number };

/** What each isolation measure costs a call: one heavy zygote times each variant (each adding one measure). */
async function measureIsolation(pool: Pool): Promise<IsolationCost[]> {
  let measures: IsolationCost[] = [];
  await settle();
  // (A pool module given with --pool may predate the measurement.)
  if (typeof pool.measureIsolation === 'function') {
    const empty = await pool.measureIsolation(QUICK ? 100 : 400);
    const sympy = await pool.measureIsolation(QUICK ? 20 : 80, SNIPPETS[1].code);
    measures = empty.map((m, i) => ({ measure: m.measure, ms: m.ms, sympyMs: sympy[i].ms }));
  }
  console.log(
    'cost of each isolation measure (median per call, one heavy zygote, each row adds one measure; empty call | sympy snippet):',
  );
  measures.forEach((m, i) =>
    console.log(
      `  ${m.measure.padEnd(58)} ${fmt(m.ms)} ms${i ? ` (+${fmt(m.ms - measures[i - 1].ms)})` : ''} | ${fmt(m.sympyMs)} ms${i ? ` (+${fmt(m.sympyMs - measures[i - 1].sympyMs)})` : ''}`,
    ),
  );
  console.log('');
  return measures;
}

/** Every snippet at every concurrency on the pool, the baseline and the peer; true when a result was wrong. */
async function measureSnippets(pool: Pool, peer: LlmSandboxPeer | null, results: Result[]): Promise<boolean> {
  let failed = false;
  for (const s of SNIPPETS) {
    // Warm-up: every zygote forks a few of these; the baseline warms the page cache.
    for (let i = 0; i < pool.opts.size * 2; i++) await pool.run({ code: s.code });
    await baselineCall(s.code);
    if (peer) for (let i = 0; i < 4; i++) await peer.run(s.code);
    for (const c of CONCURRENCY) {
      const n = s.calls[c];
      // Let the previous cell's processes (64 killed baseline interpreters, say) finish exiting first, so
      // neither side is measured while the kernel is still tearing the other's down.
      await settle();
      const p = await measure(
        n,
        c,
        async () => {
          const r = await pool.run({ code: s.code });
          return {
            status: r.status,
            stdout: r.stdout,
            stderr: r.stderr,
            errorType: r.errorType,
            exitCode: r.exitCode,
          };
        },
        (o) => s.check(o, 'pool'),
      );
      await settle();
      const b = await measure(
        n,
        c,
        () => baselineCall(s.code),
        (o) => s.check(o, 'baseline'),
        true,
      );
      let q: Cell | null = null;
      if (peer) {
        await settle();
        q = await measure(
          n,
          c,
          () => peer.run(s.code),
          (o) => s.check(o, 'peer'),
          true,
        );
      }
      results.push({ s, c, pool: p, base: b, peer: q });
      const bad = [
        ...p.errors.map((e) => `pool: ${e}`),
        ...b.errors.map((e) => `baseline: ${e}`),
        ...(q?.errors ?? []).map((e) => `peer: ${e}`),
      ];
      if (bad.length) failed = true;
      console.log(
        `(${s.key}) ${s.name.padEnd(10)} c=${pad(String(c), 2)} n=${pad(String(n), 4)}  pool ${pad(fmt(p.callsPerS), 7)}/s p50 ${pad(fmt(p.p50), 6)} p99 ${pad(fmt(p.p99), 7)} ms | ` +
          `baseline ${pad(fmt(b.callsPerS), 6)}/s${b.timeouts ? ` (${b.timeouts} timed out)` : ''} p50 ${pad(fmt(b.p50), 6)} p99 ${pad(fmt(b.p99), 7)} ms | ×${fmt(p.callsPerS / b.callsPerS)}` +
          (q
            ? ` | llm-sandbox ${pad(fmt(q.callsPerS), 6)}/s${q.timeouts ? ` (${q.timeouts} timed out)` : ''} p50 ${pad(fmt(q.p50), 6)} p99 ${pad(fmt(q.p99), 7)} ms | ×${fmt(p.callsPerS / q.callsPerS)}`
            : '') +
          (bad.length ? `  FAILED: ${bad.length} wrong result(s), e.g. ${bad.filter(Boolean)[0]}` : ''),
      );
    }
  }
  return failed;
}

/** The snippets on a code-judge server, when `--peer-url` names one. */
async function measureJudge(): Promise<Judged[]> {
  const judged: Judged[] = [];
  if (JUDGE_URL) {
    if (!(await codeJudgeUp(JUDGE_URL))) throw new Error(`--peer-url: no code-judge answers at ${JUDGE_URL}`);
    for (const s of SNIPPETS)
      for (const c of CONCURRENCY) {
        await settle();
        const cell = await measure(
          s.calls[c]!,
          c,
          () => codeJudgeRun(JUDGE_URL, s.code),
          (o) => s.check(o, 'peer'),
          true,
        );
        judged.push({ s, c, cell });
      }
  }

  return judged;
}

/** The bench's targets, each with what it got and whether it was met. */
function targetsOf(results: Result[], withPeer: boolean) {
  const cells = (k: string) => results.filter((r) => r.s.key === k);
  const peak = (k: string, side: 'pool' | 'base') => Math.max(...cells(k).map((r) => r[side].callsPerS));
  const ok = (k: string) =>
    cells(k).every((r) => !r.pool.errors.length && !r.base.errors.length && !r.peer?.errors.length);
  const peerPeak = (k: string) => Math.max(...cells(k).map((r) => r.peer?.callsPerS ?? Number.NaN));
  const bC1 = cells('b').find((r) => r.c === 1)!;
  const targets = [
    {
      what: '(a) pool ≥ 400 calls/s (peak over concurrencies)',
      got: `${fmt(peak('a', 'pool'), 0)} calls/s`,
      met: ok('a') && peak('a', 'pool') >= 400,
    },
    {
      what: '(b) pool p50 ≤ 20 ms (concurrency 1)',
      got: `${fmt(bC1.pool.p50)} ms`,
      met: ok('b') && bC1.pool.p50 <= 20,
    },
    {
      what: '(a) pool ≥ 5× baseline throughput (peak vs peak)',
      got: `${fmt(peak('a', 'pool') / peak('a', 'base'))}×`,
      met: ok('a') && peak('a', 'pool') >= 5 * peak('a', 'base'),
    },
    {
      what: '(b) pool ≥ 20× baseline throughput (peak vs peak)',
      got: `${fmt(peak('b', 'pool') / peak('b', 'base'))}×`,
      met: ok('b') && peak('b', 'pool') >= 20 * peak('b', 'base'),
    },
    {
      what: '(a) pool ≥ 700 calls/s with every isolation measure on (peak)',
      got: `${fmt(peak('a', 'pool'), 0)} calls/s`,
      met: ok('a') && peak('a', 'pool') >= 700,
    },
    ...(withPeer
      ? [
          {
            what: '(a) pool ≥ 20× llm-sandbox (bubblewrap) throughput (peak vs peak)',
            got: `${fmt(peak('a', 'pool') / peerPeak('a'))}× (${fmt(peak('a', 'pool'), 0)} vs ${fmt(peerPeak('a'))} calls/s)`,
            met: ok('a') && peak('a', 'pool') >= 20 * peerPeak('a'),
          },
        ]
      : []),
  ];
  return targets;
}

/** The results, the targets and the table for docs/benchmarks.md, on stdout. */
function printReport(
  results: Result[],
  judged: Judged[],
  measures: IsolationCost[],
  withPeer: boolean,
  poolSize: number,
  failed: boolean,
  t00: number,
) {
  const head = `| snippet | conc. | pool calls/s | pool p50 ms | pool p99 ms | baseline calls/s | baseline p50 ms | baseline p99 ms | speed-up |${withPeer ? ' llm-sandbox calls/s | llm-sandbox p50 ms | llm-sandbox p99 ms | pool ÷ llm-sandbox |' : ''}`;
  const rule = `|---|--:|--:|--:|--:|--:|--:|--:|--:|${withPeer ? '--:|--:|--:|--:|' : ''}`;
  const rows = results.map(
    ({ s, c, pool: p, base: b, peer: q }) =>
      `| (${s.key}) ${s.name}${p.errors.length || b.errors.length || q?.errors.length ? ' **FAILED**' : ''} | ${c} | ${fmt(p.callsPerS, 0)} | ${fmt(p.p50)} | ${fmt(p.p99)} | ${fmt(b.callsPerS, 1)}${b.timeouts ? ` (${b.timeouts}/${b.n} timed out)` : ''} | ${fmt(b.p50)} | ${fmt(b.p99)} | ${fmt(p.callsPerS / b.callsPerS)}× |` +
      (q
        ? ` ${fmt(q.callsPerS, 1)}${q.timeouts ? ` (${q.timeouts}/${q.n} timed out)` : ''} | ${fmt(q.p50)} | ${fmt(q.p99)} | ${fmt(p.callsPerS / q.callsPerS)}× |`
        : ''),
  );

  const targets = targetsOf(results, withPeer);
  console.log('\n## Results\n');
  console.log([head, rule, ...rows].join('\n'));
  if (judged.length) {
    console.log(`\n## code-judge at ${JUDGE_URL}\n`);
    console.log(
      '| snippet | conc. | code-judge calls/s | p50 ms | p99 ms | pool ÷ code-judge |\n|---|--:|--:|--:|--:|--:|',
    );
    for (const j of judged) {
      const p = results.find((r) => r.s === j.s && r.c === j.c)!.pool;
      console.log(
        `| (${j.s.key}) ${j.s.name}${j.cell.errors.length ? ' **FAILED**' : ''} | ${j.c} | ${fmt(j.cell.callsPerS)} | ${fmt(j.cell.p50)} | ${fmt(j.cell.p99)} | ${fmt(p.callsPerS / j.cell.callsPerS)}× |`,
      );
    }
  }
  console.log('\n## Targets\n');
  for (const t of targets) console.log(`${t.met ? 'MET    ' : 'NOT MET'}  ${t.what}: ${t.got}`);
  const total = (performance.now() - t00) / 1000;
  console.log(
    `\nwhole bench: ${total.toFixed(0)} s${failed ? '; SOME RESULTS WERE WRONG (see FAILED above): their figures mean nothing' : '; every result checked (status, stdout, error type)'}`,
  );

  console.log('\n<!-- docs/benchmarks.md table (bench:sandbox) -->');
  console.log('```markdown');
  console.log(
    `Sandbox pool (size ${poolSize} = cores, bubblewrap isolation ON) vs spawn-per-call baseline (\`python3 source.py\` under prlimit, the released rStar2 method, NO isolation), ${os.cpus().length}-core ${os.cpus()[0]?.model ?? ''}; closed loop, latency as the caller sees it:\n`,
  );
  console.log([head, rule, ...rows].join('\n'));
  console.log('');
  for (const t of targets) console.log(`- ${t.met ? '✅' : '❌'} ${t.what}: ${t.got}`);
  console.log(
    '\nWhat each isolation measure adds to a call (median of forks of one heavy zygote, each row adds one measure to the one above):\n',
  );
  console.log('| measure | empty call, ms | added | sympy snippet (b), ms | added |\n|---|--:|--:|--:|--:|');
  measures.forEach((m, i) =>
    console.log(
      `| ${m.measure} | ${fmt(m.ms)} | ${i ? `+${fmt(m.ms - measures[i - 1].ms)}` : ''} | ${fmt(m.sympyMs)} | ${i ? `+${fmt(m.sympyMs - measures[i - 1].sympyMs)}` : ''} |`,
    ),
  );
  console.log('```');
}

async function main() {
  const t00 = performance.now();
  if (spawnSyncOk('prlimit', ['--version']) === false) throw new Error('the baseline needs prlimit (util-linux)');
  const { SandboxPool } = (await import(POOL_MODULE)) as typeof import('../workers/sandbox/pool.ts');
  const ts = performance.now();
  const pool = await SandboxPool.start({ bench: true });
  const startS = (performance.now() - ts) / 1000;
  if (pool.opts.unsafe)
    throw new Error('the bench measures the pool with isolation on; unset TOOLSMITH_SANDBOX_UNSAFE');
  console.log(
    `# bench:sandbox — ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), node ${process.version}, ${QUICK ? 'QUICK' : 'full'} sizes`,
  );
  console.log(
    `pool: ${POOL_MODULE === new URL('../workers/sandbox/pool.ts', import.meta.url).pathname ? 'workers/sandbox/pool.ts' : POOL_MODULE}, size ${pool.opts.size}, isolation ON (bubblewrap), preload ${pool.opts.preload.join(',')}, started in ${startS.toFixed(1)} s`,
  );
  console.log(
    `baseline: prlimit --cpu=${TIMEOUT_S} --as=1GiB --core=0 ${PYTHON} source.py in a fresh temp dir, setsid, OPENBLAS_NUM_THREADS=1, ${TIMEOUT_S} s timeout, killpg after; NO isolation`,
  );
  console.log('');

  const results: Result[] = [];
  const peer = WITH_PEER ? await LlmSandboxPeer.start(Math.max(...CONCURRENCY)) : null;
  if (peer)
    console.log(
      `peer: llm-sandbox ${LLM_SANDBOX.version}, bubblewrap backend, ${Math.max(...CONCURRENCY)} sessions opened in ${peer.openS.toFixed(1)} s\n`,
    );
  let failed = false;
  let measures: IsolationCost[] = [];
  let sessions: Awaited<ReturnType<typeof measureSessions>> | null = null;
  try {
    measures = await measureIsolation(pool);
    failed = await measureSnippets(pool, peer, results);
    // (A pool module given with --pool may predate sessions.)
    if (typeof pool.openSession === 'function') sessions = await measureSessions(pool, SNIPPETS.slice(0, 3), scale);
    if (sessions?.rows.some((r) => r.session.errors.length || r.fresh.errors.length) || sessions?.open.errors.length)
      failed = true;
  } finally {
    await pool.close();
    await peer?.close();
  }
  const judged = await measureJudge();
  if (judged.some((j) => j.cell.errors.length)) failed = true;
  printReport(results, judged, measures, peer !== null, pool.opts.size, failed, t00);
  if (sessions) printSessions(sessions);
  process.exitCode = failed ? 1 : 0;
}

function spawnSyncOk(cmd: string, args: string[]) {
  return spawnSync(cmd, args).status === 0;
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
