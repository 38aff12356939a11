import { UserError } from '../contracts/errors.ts';

/** Flags that would carry a secret on the command line, which every local user can read (ps, /proc): refused. */
const SECRET_FLAGS = new Set(['token', 'api-key', 'apikey', 'password', 'secret', 'auth-secret', 'client-secret']);

/** Minimal `--flag value` / `--flag` parser; unknown flags are an error naming the flag; secret flags are refused. */
export function parseFlags(
  args: string[],
  spec: Record<string, 'string' | 'number' | 'boolean'>,
): Record<string, string | number | boolean | undefined> {
  const out: Record<string, string | number | boolean | undefined> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--'))
      throw new UserError(`unexpected argument "${a}"`, { fix: 'options look like --name value' });
    const eq = a.indexOf('=');
    const key = eq === -1 ? a.slice(2) : a.slice(2, eq);
    const inline = eq === -1 ? undefined : a.slice(eq + 1);
    if (SECRET_FLAGS.has(key))
      throw new UserError(
        `--${key} is not accepted: a secret on the command line is visible to every user of this machine (ps, /proc)`,
        {
          field: `--${key}`,
          fix: "pass it through the environment variable or the --…-file option this command's --help names",
        },
      );
    const type = spec[key];
    if (!type)
      throw new UserError(`unknown option --${key}`, {
        fix: `known: ${
          Object.keys(spec)
            .map((k) => `--${k}`)
            .join(', ') || 'none'
        }`,
      });
    if (type === 'boolean') {
      out[key] = true;
      continue;
    }
    const value = inline ?? args[++i];
    if (value === undefined) throw new UserError(`option --${key} needs a value`);
    if (type === 'number') {
      const n = value.trim() === '' ? NaN : Number(value);
      if (!Number.isFinite(n)) throw new UserError(`option --${key}: "${value}" is not a number`);
      out[key] = n;
    } else out[key] = value;
  }
  return out;
}
