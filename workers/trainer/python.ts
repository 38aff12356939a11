import path from 'node:path';
import { config } from '../../server/config.ts';

const VENV_PYTHON = path.resolve(import.meta.dirname, '../../.venv/bin/python');

/**
 * The interpreter the trainer runs under: TOOLSMITH_TRAINER_PYTHON, else the virtual environment set-up builds from
 * workers/trainer/requirements.txt (PyTorch 2, transformers). Not the sandbox's Python, which stays Debian's.
 */
export function trainerPython(): string {
  return config().trainerPython ?? VENV_PYTHON;
}
