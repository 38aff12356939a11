import { parseFlags } from '../cli/args.ts';

/** A benchmark's flags through the CLI's parser: `--help` prints the usage; a bad flag is one line and exit 2. */
export function benchFlags<S extends Record<string, 'string' | 'number' | 'boolean'>>(
  name: string,
  usage: string,
  spec: S,
) {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(`usage: ${usage}`);
    process.exit(0);
  }
  try {
    return parseFlags(argv, spec);
  } catch (e) {
    console.error(`${name}: ${(e as Error).message} (usage: ${usage})`);
    process.exit(2);
  }
}
