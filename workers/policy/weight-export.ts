/**
 * Where the trainer writes each weight version for rollout servers (docs/scaling-out.md "Weight sync"): one folder per version,
 * v000001, v000002, … under the run's weight-sync folder (TOOLSMITH_WEIGHT_SYNC_DIR/<run id>, or its subfolder
 * engine.weightSync.dir: runWeightSyncDir), each written whole (the trainer builds it in a sibling and renames it in). Only the newest two are kept: the
 * one being loaded and the one the servers still serve until they have; older ones are deleted. Numbers continue
 * after the highest folder already there, so a resumed run never rewrites a folder a server may be reading.
 *
 * What goes in a folder: the HF model (export_hf: LoRA merged in; what SGLang and vLLM load); with `onnx`, the ONNX
 * export as <version>/onnx beside it (what serve-model loads); in vllm-lora mode the trainer's checkpoint of the
 * LoRA run (save), whose adapter_config.json + adapter_model.safetensors are the adapter vLLM loads (the trainer has
 * no adapter-only export; the optimiser's moments for the adapter ride along, twice the adapter's size).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { WeightSyncMode } from '../../contracts/engine.ts';
import { NAME_RE, NAME_RULE } from '../../contracts/names.ts';
import type { Trainer } from '../trainer/types.ts';
import { PermanentJobError } from '../types.ts';

const VERSION_DIR = /^v(\d{6,})$/;

/** realpath, or null when nothing is there yet. */
function realOrNull(p: string): string | null {
  try {
    return fs.realpathSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * The folder a run's weight versions go to: <root>/<runId>, or <root>/<runId>/<dir> when the recipe names
 * engine.weightSync.dir. Whatever already exists on the way must be the real folder of that name (no link), so a
 * recipe can never make its run write (and prune) versions in another run's folder or anywhere else on the host.
 */
export function runWeightSyncDir(root: string, runId: string, dir?: string): string {
  const field = 'engine.weightSync.dir';
  if (dir !== undefined && !NAME_RE.test(dir))
    throw new PermanentJobError(
      `${field}: "${String(dir).slice(0, 100)}" is not a folder name: ${NAME_RULE} (a name inside this run's weight-sync folder, never a path)`,
    );
  if (!NAME_RE.test(runId))
    throw new PermanentJobError(`${field}: run id "${runId.slice(0, 100)}" is not a folder name`);
  const own = path.join(root, runId);
  const target = dir === undefined ? own : path.join(own, dir);
  const realRoot = realOrNull(root);
  if (realRoot === null) return target; // nothing there yet: it will be created as real folders
  for (const [p, expected] of [
    [own, path.join(realRoot, runId)],
    [target, path.join(realRoot, runId, dir ?? '')],
  ] as const) {
    const isLink = (() => {
      try {
        return fs.lstatSync(p).isSymbolicLink();
      } catch {
        return false;
      }
    })();
    const real = realOrNull(p);
    if (isLink || (real !== null && real !== path.resolve(expected))) {
      throw new PermanentJobError(
        `${field}: ${p} ${isLink ? 'is a link' : 'resolves elsewhere'}; refused (a run writes weight versions only inside its own weight-sync folder, ${own})`,
      );
    }
  }
  return target;
}

export const versionDirName = (n: number): string => `v${String(n).padStart(6, '0')}`;

/** The version folders among `names`, oldest first. */
export function versionDirs(names: string[]): { name: string; n: number }[] {
  return names
    .flatMap((name) => {
      const m = VERSION_DIR.exec(name);
      return m ? [{ name, n: Number(m[1]) }] : [];
    })
    .sort((a, b) => a.n - b.n);
}

/** The number the next folder gets: one past the highest there (1 in an empty folder). */
export const nextVersionNumber = (names: string[]): number => (versionDirs(names).at(-1)?.n ?? 0) + 1;

/** The version folders to delete so that the newest `keep` remain. */
export function foldersToPrune(names: string[], keep = 2): string[] {
  const d = versionDirs(names);
  return d.slice(0, Math.max(0, d.length - keep)).map((x) => x.name);
}

export class VersionedExport {
  constructor(
    readonly root: string,
    private readonly mode: WeightSyncMode,
    private readonly onnx: boolean,
  ) {}

  /** Write the trainer's current weights as the next version; returns its folder. */
  async write(trainer: Trainer): Promise<string> {
    fs.mkdirSync(this.root, { recursive: true });
    const dir = path.join(this.root, versionDirName(nextVersionNumber(fs.readdirSync(this.root))));
    if (this.mode === 'vllm-lora') await trainer.save(dir);
    else {
      await trainer.exportHf(dir);
      if (this.onnx) await trainer.exportOnnx(path.join(dir, 'onnx'));
    }
    for (const old of foldersToPrune(fs.readdirSync(this.root)))
      fs.rmSync(path.join(this.root, old), { recursive: true, force: true });
    return dir;
  }
}
