/**
 * Whether the embedded engine can decode on a device here, asked before a run starts (workers/handlers/train.ts) and by
 * `npm run check:gpu-rl`. Apart from onnx-model.ts so that asking does not load onnxruntime's native library.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { EngineDevice } from '../../contracts/engine.ts';

/** The folder of onnxruntime-node's native libraries on this platform. */
function ortNativeDir(): string {
  const pkg = path.dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));
  return path.join(pkg, 'bin', 'napi-v6', process.platform, process.arch);
}

/**
 * Why the engine cannot decode on `device` here, or null. onnxruntime-node bundles only its CPU provider; the CUDA one
 * is fetched at install when asked for, and it needs a GPU.
 */
export function engineDeviceProblem(device: EngineDevice, gpus: number | null): string | null {
  if (device === 'cpu') return null;
  if (gpus === 0) return 'engine.device: "cuda" needs a GPU on this worker; torch sees none';
  if (!fs.existsSync(path.join(ortNativeDir(), 'libonnxruntime_providers_cuda.so')))
    return 'engine.device: "cuda" needs onnxruntime-node\'s CUDA provider, which is not installed here (on a machine with CUDA 12 and cuDNN 9: ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node)';
  return null;
}
