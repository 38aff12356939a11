/**
 * Weight sync (docs/method.md §5: fully on-policy): after an update the trainer exports its weights and the
 * policy's engine reloads them before the next rollouts. Stage ends, evaluations and RL stage starts all ask for a
 * sync; only the first after an update pays for the export and reload.
 *
 * Where the weights go: by default the ONNX export in `exportDir`, which the embedded engine loads. A factory built
 * for remote servers (engines/create.ts remotePolicy) says where in its typed `versions` field: a new versioned
 * folder under the shared weight-sync folder per sync (weight-export.ts), which the engine pushes to every server
 * and waits for (OpenAIEngine.reload). sync() resolves only once every server serves it, so the next step's
 * rollouts never start on the old weights.
 */
import type { EngineWeights } from '../../contracts/engine.ts';
import type { BatchCounters, PolicyEngine, PolicyEngineFactory } from '../engines/types.ts';
import type { Trainer } from '../trainer/types.ts';
import { VersionedExport } from './weight-export.ts';

/** Writes the trainer's current weights somewhere an engine loads them from; returns that folder. */
export interface WeightExporter {
  write(trainer: Trainer): Promise<string>;
}

/** The exporter for `factory`'s engines: versioned folders when it names them, else the ONNX export in `exportDir`. */
function exporterFor(factory: PolicyEngineFactory, exportDir: string, weights: EngineWeights): WeightExporter {
  const v = factory.versions;
  return v
    ? new VersionedExport(v.root, v.mode, v.onnx)
    : {
        write: async (t) => {
          await t.exportOnnx(exportDir, { weights });
          return exportDir;
        },
      };
}

/** `factory`, also handing each engine it builds to `onEngine` (the dashboard's engine figures); keeps its `versions`. */
export function observeEngines(factory: PolicyEngineFactory, onEngine: (e: PolicyEngine) => void): PolicyEngineFactory {
  const wrapped = async (dir: string): Promise<PolicyEngine> => {
    const e = await factory(dir);
    onEngine(e);
    return e;
  };
  return factory.versions ? Object.assign(wrapped, { versions: factory.versions }) : wrapped;
}

export class PolicySync {
  private current: PolicyEngine | null = null;
  /** The trainer holds weights the engine has not loaded. */
  private stale = true;
  private readonly exporter: WeightExporter;
  /** The folder the engine loaded last. */
  lastDir: string | null = null;

  constructor(
    private readonly trainer: Trainer,
    private readonly create: PolicyEngineFactory,
    exportDir: string,
    /** The embedded engine's weight format (the recipe's engine.weights). */
    weights: EngineWeights = 'float32',
  ) {
    this.exporter = exporterFor(create, exportDir, weights);
  }

  /** The engine serving the policy (after the first sync). */
  get engine(): PolicyEngine | null {
    return this.current;
  }

  /** Milliseconds the engine has spent inside the model so far. */
  get computeMs(): number {
    return this.current?.computeMs ?? 0;
  }

  /** The engine's batch counters so far, where it runs its own batches (PolicyEngine.batchCounters). */
  get batchCounters(): BatchCounters | undefined {
    return this.current?.batchCounters;
  }

  /** The trainer updated its weights. */
  updated(): void {
    this.stale = true;
  }

  /** Bring the engine to the trainer's weights; returns the seconds it took (0 when they were current). */
  async sync(): Promise<number> {
    if (this.current && !this.stale) return 0;
    const t0 = performance.now();
    const dir = await this.exporter.write(this.trainer);
    if (this.current) await this.current.reload(dir);
    else this.current = await this.create(dir);
    this.lastDir = dir;
    this.stale = false;
    return (performance.now() - t0) / 1000;
  }

  async close(): Promise<void> {
    await this.current?.close();
  }
}
