import { reportFatal } from '../server/errors.ts';
import { UserError } from '../contracts/errors.ts';
import { commands } from './commands.ts';

/** `npx toolsmith <command> [args]`. Each command lives in its own module, listed in commands.ts. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    await printHelp();
    return 0;
  }
  const entry = commands.find((c) => c.name === name);
  if (!entry) {
    console.error(`toolsmith: unknown command "${name}" — run \`npx toolsmith --help\` for the list`);
    return 2;
  }
  try {
    const cmd = await entry.load();
    if (args.includes('--help') || args.includes('-h')) {
      console.log(`usage: npx toolsmith ${cmd.name} ${cmd.usage ?? ''}\n\n${cmd.summary}`);
      return 0;
    }
    return (await cmd.run(args)) ?? 0;
  } catch (e) {
    reportFatal(`toolsmith ${name}`, e);
    return e instanceof UserError ? 2 : 1;
  }
}

/** The full list loads every command's module: help is the one place that needs all their summaries. */
async function printHelp() {
  const all = await Promise.all(commands.map((c) => c.load()));
  const width = Math.max(...all.map((c) => c.name.length)) + 2;
  console.log('usage: npx toolsmith <command> [options]\n\ncommands:');
  for (const c of all) console.log(`  ${c.name.padEnd(width)}${c.summary}`);
  console.log("\nnpx toolsmith <command> --help shows a command's options.");
}
