/** One subcommand of `npx toolsmith`: its module exports it, cli/commands.ts names it and loads it on demand. */
export interface Command {
  name: string;
  summary: string;
  usage?: string;
  run(args: string[]): Promise<number | void>;
}
