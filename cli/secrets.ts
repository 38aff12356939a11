import fs from 'node:fs';
import { UserError } from '../contracts/errors.ts';

/**
 * Secrets reach a command from an environment variable or a file, never from argv: any local user reads every
 * process's command line (`ps`, /proc/PID/cmdline), and shells keep it in their history.
 */
export interface SecretSource {
  /** The flags refused on argv (without --), e.g. ['token']. */
  refused: string[];
  /** The environment variable it is read from. */
  env: string;
  /** The flag naming a file that holds it (without --), e.g. 'token-file'. */
  fileFlag: string;
}

/** Throw a UserError when argv carries one of the refused secret flags (`--token X` or `--token=X`). */
export function refuseSecretFlags(args: string[], src: SecretSource): void {
  for (const a of args) {
    const name = a.startsWith('--') ? a.slice(2).split('=')[0]! : null;
    if (name !== null && src.refused.includes(name)) {
      throw new UserError(
        `--${name} is not accepted: a secret on the command line is visible to every user of this machine (ps, /proc)`,
        {
          field: `--${name}`,
          fix: `set ${src.env}, or put it in a file only you can read and pass --${src.fileFlag} FILE`,
        },
      );
    }
  }
}

/** The secret from `--<fileFlag> FILE` (its first line, trimmed) or else the environment; undefined when neither. */
export function readSecret(
  file: string | undefined,
  envValue: string | undefined,
  src: SecretSource,
  warn: (line: string) => void = (l) => console.error(l),
): string | undefined {
  if (file !== undefined) {
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (e) {
      throw new UserError(
        `--${src.fileFlag} ${file}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
        { field: `--${src.fileFlag}` },
      );
    }
    const secret = text.split(/\r?\n/)[0]!.trim();
    if (!secret)
      throw new UserError(`--${src.fileFlag} ${file}: the file is empty`, {
        field: `--${src.fileFlag}`,
        fix: 'write the secret on its first line (e.g. `openssl rand -hex 32 > FILE`)',
      });
    const mode = fs.statSync(file).mode;
    if (mode & 0o077)
      warn(
        `warning: --${src.fileFlag} ${file} is readable by other users (mode ${(mode & 0o777).toString(8)}); chmod 600 it`,
      );
    return secret;
  }
  return envValue?.trim() || undefined;
}
