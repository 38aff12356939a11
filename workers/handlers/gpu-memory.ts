import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { trainerPython } from '../trainer/python.ts';

const run = promisify(execFile);

/** Device files whose presence says a GPU may be here (NVIDIA, AMD's KFD). */
const GPU_DEVICE_FILES = ['/dev/nvidia0', '/dev/kfd', '/proc/driver/nvidia/gpus'];

/**
 * The memory of each GPU the trainer's torch sees, in bytes ([] on a CPU host, or when torch cannot tell). Asked of
 * a child the event loop waits for, never synchronously: the train handler runs inside a worker whose job
 * heartbeats share that loop, and importing torch takes seconds on a busy machine.
 */
export async function gpuMemory(device: 'auto' | 'cpu' | 'cuda', python = trainerPython()): Promise<number[]> {
  if (device === 'cpu') return [];
  if (device === 'auto' && !GPU_DEVICE_FILES.some((p) => fs.existsSync(p))) return [];
  try {
    const { stdout } = await run(
      python,
      [
        '-c',
        'import json, torch; print(json.dumps([torch.cuda.get_device_properties(i).total_memory for i in range(torch.cuda.device_count())]))',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const list = JSON.parse(stdout.trim().split('\n').pop() ?? '[]') as unknown;
    return Array.isArray(list) ? list.map(Number).filter((n) => Number.isFinite(n) && n > 0) : [];
  } catch {
    return [];
  }
}
