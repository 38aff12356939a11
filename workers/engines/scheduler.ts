import { admit, everFits, type EngineBudget } from './admission.ts';
import type {
  EngineCapacity,
  EngineStats,
  GenerateChunk,
  GenerateRequest,
  GenerateResult,
  InferenceEngine,
} from './types.ts';

interface Pending {
  id: string;
  tokens: number;
  start: (engine: InferenceEngine) => void;
}

/**
 * Spreads generation requests over engines by free token budget (docs/method.md §6) and reports how busy each engine
 * was. It is itself an InferenceEngine, so the agent loop does not know whether it talks to one engine or many.
 */
export class EngineScheduler implements InferenceEngine {
  readonly id = 'scheduler';
  private budgets: EngineBudget[];
  private queue: Pending[] = [];
  private seq = 0;
  private busySince = new Map<string, number>();
  private busyMs = new Map<string, number>();
  private inFlight = new Map<string, number>();
  private since = Date.now();

  constructor(private engines: InferenceEngine[]) {
    if (engines.length === 0) throw new Error('the scheduler needs at least one engine');
    this.budgets = engines.map((e) => ({ id: e.id, total: e.capacity().totalTokens, reserved: 0 }));
    for (const e of engines) {
      this.busyMs.set(e.id, 0);
      this.inFlight.set(e.id, 0);
    }
  }

  countTokens(text: string): number {
    return this.engines[0].countTokens(text);
  }

  generate(req: GenerateRequest, onChunk?: (c: GenerateChunk) => void): Promise<GenerateResult> {
    const promptTokens = req.promptTokens ?? this.countTokens(req.prompt);
    const tokens = promptTokens + req.maxTokens;
    if (!everFits(tokens, this.budgets)) {
      return Promise.resolve({
        text: '',
        tokenIds: [],
        logprobs: null,
        finishReason: 'error',
        stopString: null,
        promptTokens,
        weightVersion: null,
        error: `the request needs ${tokens} tokens (prompt ${promptTokens} + max ${req.maxTokens}) and no engine holds more than ${Math.max(...this.budgets.map((b) => b.total))}`,
      });
    }
    return new Promise<GenerateResult>((resolve) => {
      const id = String(++this.seq);
      this.queue.push({
        id,
        tokens,
        start: (engine) => {
          this.markBusy(engine.id, +1);
          engine
            .generate({ ...req, promptTokens }, onChunk)
            .then(resolve, (e) =>
              resolve({
                text: '',
                tokenIds: [],
                logprobs: null,
                finishReason: 'error',
                stopString: null,
                promptTokens,
                weightVersion: null,
                error: (e as Error).message,
              }),
            )
            .finally(() => {
              const b = this.budgets.find((x) => x.id === engine.id)!;
              b.reserved -= tokens;
              this.markBusy(engine.id, -1);
              this.pump();
            });
        },
      });
      this.pump();
    });
  }

  private pump() {
    const { assignments, engines } = admit(
      this.queue.map((p) => ({ id: p.id, tokens: p.tokens })),
      this.budgets,
    );
    if (assignments.length === 0) return;
    this.budgets = engines;
    for (const a of assignments) {
      const i = this.queue.findIndex((p) => p.id === a.requestId);
      const [p] = this.queue.splice(i, 1);
      p.start(this.engines.find((e) => e.id === a.engineId)!);
    }
  }

  private markBusy(id: string, delta: number) {
    const now = Date.now();
    const before = this.inFlight.get(id)!;
    const after = before + delta;
    this.inFlight.set(id, after);
    if (before === 0 && after > 0) this.busySince.set(id, now);
    if (before > 0 && after === 0) {
      this.busyMs.set(id, this.busyMs.get(id)! + now - this.busySince.get(id)!);
      this.busySince.delete(id);
    }
  }

  /** Fraction of wall time since the last reset during which each engine had at least one request running. */
  busyFraction(): Record<string, number> {
    const now = Date.now();
    const span = Math.max(1, now - this.since);
    const out: Record<string, number> = {};
    for (const e of this.engines) {
      const open = this.busySince.has(e.id) ? now - this.busySince.get(e.id)! : 0;
      out[e.id] = (this.busyMs.get(e.id)! + open) / span;
    }
    return out;
  }

  resetStats() {
    const now = Date.now();
    this.since = now;
    for (const e of this.engines) {
      this.busyMs.set(e.id, 0);
      if (this.busySince.has(e.id)) this.busySince.set(e.id, now);
    }
  }

  capacity(): EngineCapacity {
    const total = this.budgets.reduce((s, b) => s + b.total, 0);
    const reserved = this.budgets.reduce((s, b) => s + b.reserved, 0);
    return {
      totalTokens: total,
      freeTokens: total - reserved,
      inFlight: [...this.inFlight.values()].reduce((s, n) => s + n, 0),
    };
  }

  /** Each engine's own figures (requests it holds), or what the scheduler knows of one that reports none. */
  stats(): EngineStats[] {
    return this.engines.flatMap(
      (e) =>
        e.stats?.() ?? [
          {
            id: e.id,
            waiting: 0,
            running: this.inFlight.get(e.id)!,
            kvBlocksUsed: 0,
            kvBlocksTotal: 0,
            blockTokens: 0,
            tokensPerS: 0,
            weightVersion: null,
          },
        ],
    );
  }

  /** Requests waiting for budget. */
  waiting(): number {
    return this.queue.length;
  }

  async close(): Promise<void> {
    await Promise.all(this.engines.map((e) => e.close()));
  }
}
