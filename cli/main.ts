import { reportFatal } from '../server/errors.ts';
import { UserError } from '../contracts/errors.ts';
import { commands } from './commands.ts';

/** `npx toolsmith <command> [args]`. Each command lives in commands.ts with its one-line help. */
export async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    printHelp();
    return 0;
  }
  const cmd = commands.find((c) => c.name === name);
  if (!cmd) {
    console.error(`toolsmith: unknown command "${name}" — run \`npx toolsmith --help\` for the list`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`usage: npx toolsmith ${cmd.name} ${cmd.usage ?? ''}\n\n${cmd.summary}`);
    return 0;
  }
  try {
    return (await cmd.run(args)) ?? 0;
  } catch (e) {
    reportFatal(`toolsmith ${name}`, e);
    return e instanceof UserError ? 2 : 1;
  }
}

function printHelp() {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  console.log('usage: npx toolsmith <command> [options]\n\ncommands:');
  for (const c of commands) console.log(`  ${c.name.padEnd(width)}${c.summary}`);
  console.log("\nnpx toolsmith <command> --help shows a command's options.");
}
