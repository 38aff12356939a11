import type { Command } from './command.ts';

/**
 * Subcommands of `npx toolsmith`, in the order of the help. Each module is loaded only when its command runs:
 * importing them all cost ~0.9 s of every start (the database layer, the importers, the trainer client), which
 * every CLI call, test and job handler that starts one paid. tests/unit/cli-commands.test.ts checks each name
 * against its module's command.
 */
export interface CommandEntry {
  name: string;
  load(): Promise<Command>;
}

export const commands: CommandEntry[] = [
  { name: 'dataset', load: async () => (await import('./dataset.ts')).datasetCommand },
  { name: 'plan', load: async () => (await import('./plan.ts')).planCommand },
  { name: 'import', load: async () => (await import('./import.ts')).importCommand },
  { name: 'export', load: async () => (await import('./import.ts')).exportCommand },
  { name: 'model', load: async () => (await import('./model.ts')).modelCommand },
  { name: 'user', load: async () => (await import('./user.ts')).userCommand },
  { name: 'token', load: async () => (await import('./user.ts')).tokenCommand },
  { name: 'migrate', load: async () => (await import('./service.ts')).migrateCommand },
  { name: 'worker', load: async () => (await import('./service.ts')).workerCommand },
  { name: 'diagnostics', load: async () => (await import('./service.ts')).diagnosticsCommand },
  { name: 'sandbox', load: async () => (await import('./sandbox.ts')).sandboxCommand },
  { name: 'verify', load: async () => (await import('./verify.ts')).verifyCommand },
  { name: 'serve-model', load: async () => (await import('./serve-model.ts')).serveModelCommand },
  { name: 'mcp', load: async () => (await import('./mcp.ts')).mcpCommand },
  { name: 'eval', load: async () => (await import('./eval.ts')).evalCommand },
  { name: 'train', load: async () => (await import('./train.ts')).trainCommand },
  { name: 'ray', load: async () => (await import('./ray.ts')).rayCommand },
  { name: 'ray-entry', load: async () => (await import('./ray-entry.ts')).rayEntryCommand },
  { name: 'start', load: async () => (await import('./service.ts')).startCommand },
];
