/**
 * The processes a run starts on a Ray cluster run Toolsmith's own CLI: a Ray job's entrypoint and an actor's argv are
 * processes, not function calls. This is the one place workers/ names the CLI at run time: its path and the commands
 * it is started with, each checked to be a command of cli/commands.ts by tests/unit/layers.test.ts.
 */
import path from 'node:path';

/** The CLI's entry script, for argv started on this machine's layout (a cluster node runs the same tree). */
export const TOOLSMITH_BIN = path.resolve(import.meta.dirname, '../../bin/toolsmith.mjs');
/** The same, relative to the project folder a Ray job's entrypoint changes into. */
export const TOOLSMITH_BIN_RELATIVE = 'bin/toolsmith.mjs';

/** The CLI commands those processes run. */
export const CLI_ENTRIES = {
  /** A run's Ray job: the orchestrator with the Ray placement (train-on-ray.ts). */
  rayEntry: 'ray-entry',
  /** A sandbox node actor (ray-sandbox.ts): `sandbox serve`. */
  sandbox: 'sandbox',
  /** A rollout server actor (ray-rollout.ts). */
  serveModel: 'serve-model',
} as const;
