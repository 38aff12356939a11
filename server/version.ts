import { execFileSync } from 'node:child_process';
import { config } from './config.ts';

let cached: string | undefined;

/** The code a run was made with: the git commit (with "+dirty" when the tree has changes), else the package version. */
export function codeVersion(): string {
  if (cached) return cached;
  try {
    const sha = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { stdio: ['ignore', 'pipe', 'ignore'] })
      .toString()
      .trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    })
      .toString()
      .trim();
    cached = dirty ? `${sha}+dirty` : sha;
  } catch {
    cached = `v${config().packageVersion ?? '0.1.0'}`;
  }
  return cached;
}
