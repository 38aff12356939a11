/**
 * Weight sync (docs/method.md §5: fully on-policy): after an update the trainer exports its weights and the
 * policy's engine reloads them before the next rollouts. Stage ends, evaluations and RL stage starts all ask for a
 * sync; only the first after an update pays for the export and reload.
 */
import type { PolicyEngine, PolicyEngineFactory } from '../engines/types.ts';
import type { TrainerClient } from '../trainer/client.ts';

export class PolicySync {
  private current: PolicyEngine | null = null;
  /** The trainer holds weights the engine has not loaded. */
  private stale = true;

  constructor(private readonly trainer: TrainerClient, private readonly create: PolicyEngineFactory, private readonly exportDir: string) {}

  /** The engine serving the policy (after the first sync). */
  get engine(): PolicyEngine | null { return this.current; }

  /** Milliseconds the engine has spent inside the model so far. */
  get computeMs(): number { return this.current?.computeMs ?? 0; }

  /** The trainer updated its weights. */
  updated(): void { this.stale = true; }

  /** Bring the engine to the trainer's weights; returns the seconds it took (0 when they were current). */
  async sync(): Promise<number> {
    if (this.current && !this.stale) return 0;
    const t0 = performance.now();
    await this.trainer.exportOnnx(this.exportDir);
    if (this.current) await this.current.reload(this.exportDir);
    else this.current = await this.create(this.exportDir);
    this.stale = false;
    return (performance.now() - t0) / 1000;
  }

  async close(): Promise<void> { await this.current?.close(); }
}
