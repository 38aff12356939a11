/**
 * A peer for bench:sandbox: llm-sandbox 0.3.46 (PyPI, MIT) with its bubblewrap backend, installed for the bench only
 * into <data>/cache/bench-peers/ from its wheel pinned by version and sha256 (`pip --require-hashes`, no
 * dependencies: it needs pydantic, which the project's Python environment has), never into the product's
 * environment. Driven by bench/peers/llm_sandbox_driver.py over JSON lines, one session per concurrent caller.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { config } from '../../server/config.ts';
import { trainerPython } from '../../workers/trainer/python.ts';

export const LLM_SANDBOX = {
  version: '0.3.46',
  wheel: 'llm_sandbox-0.3.46-py3-none-any.whl',
  sha256: '3d3eb597a5a6e0861a1f3a539b2782c88c708d095e17f38492ab3c68a5c89444',
};

export interface PeerOutcome {
  status: string;
  stdout: string;
  stderr: string;
  exitCode: number | null;
}

/** The folder llm-sandbox is installed in (installed on first use), or an error saying why it cannot be. */
export function ensureLlmSandbox(): string {
  const target = path.join(config().dataDir, 'cache', 'bench-peers', `llm-sandbox-${LLM_SANDBOX.version}`);
  if (fs.existsSync(path.join(target, 'llm_sandbox', '__init__.py'))) return target;
  const tmp = `${target}.tmp-${process.pid}`;
  fs.mkdirSync(tmp, { recursive: true });
  const req = path.join(tmp, 'requirements.txt');
  fs.writeFileSync(req, `llm-sandbox==${LLM_SANDBOX.version} --hash=sha256:${LLM_SANDBOX.sha256}\n`);
  const r = spawnSync(
    trainerPython(),
    [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--no-deps',
      '--only-binary=:all:',
      '--require-hashes',
      '--target',
      tmp,
      '-r',
      req,
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`could not install llm-sandbox ${LLM_SANDBOX.version}: ${r.stderr.slice(-800)}`);
  fs.rmSync(req);
  fs.rmSync(target, { recursive: true, force: true });
  fs.renameSync(tmp, target);
  return target;
}

/** A running driver with `sessions` llm-sandbox sessions. */
export class LlmSandboxPeer {
  private next = 0;
  private readonly waiting = new Map<number, (o: PeerOutcome) => void>();

  private constructor(
    private readonly child: ChildProcess,
    readonly openS: number,
  ) {}

  static async start(sessions: number): Promise<LlmSandboxPeer> {
    const site = ensureLlmSandbox();
    const child = spawn(trainerPython(), [path.join(import.meta.dirname, 'llm_sandbox_driver.py'), String(sessions)], {
      env: { ...process.env, PYTHONPATH: site },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d) => {
      stderr = (stderr + String(d)).slice(-2000);
    });
    const lines = readline.createInterface({ input: child.stdout! });
    let peer: LlmSandboxPeer | null = null;
    return new Promise((resolve, reject) => {
      child.once('exit', (code) => reject(new Error(`llm-sandbox driver exited ${code}: ${stderr}`)));
      lines.on('line', (line) => {
        const msg = JSON.parse(line) as { ready?: number; open_s?: number; id?: number } & PeerOutcome;
        if (msg.ready !== undefined) {
          peer = new LlmSandboxPeer(child, msg.open_s ?? 0);
          resolve(peer);
          return;
        }
        peer?.waiting.get(msg.id!)?.(msg);
        peer?.waiting.delete(msg.id!);
      });
    });
  }

  run(code: string): Promise<PeerOutcome> {
    const id = this.next++;
    return new Promise((resolve) => {
      this.waiting.set(id, resolve);
      this.child.stdin!.write(`${JSON.stringify({ id, code })}\n`);
    });
  }

  async close(): Promise<void> {
    const exited = new Promise((r) => this.child.once('exit', r));
    this.child.stdin!.end();
    await exited;
  }
}
