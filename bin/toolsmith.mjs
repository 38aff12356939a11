#!/usr/bin/env node
// Entry point for `npx toolsmith`: loads TypeScript through tsx, then hands over to cli/main.ts.
import { register } from 'tsx/esm/api';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

register();
// Everything Toolsmith writes (the database, run data, checkpoints, models) is its users' alone: files 0600,
// folders 0700, for this process and the trainer, sandbox and tools it starts (server/db/private-files.ts).
process.umask(0o077);
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { main } = await import(pathToFileURL(path.join(root, 'cli/main.ts')).href);
const code = await main(process.argv.slice(2));
// A running worker returns only when it stops (it exits from its signal handler); a worker that could not
// start, and every other command, exits with its status.
// Writes to a pipe are asynchronous: exiting at once would cut off what is still queued (a large JSON result piped
// into another program arrived truncated), so every command's output is flushed first.
const flushed = (stream) =>
  new Promise((resolve) => {
    stream.write('', () => resolve());
  });
if (process.argv[2] !== 'worker' || code !== 0) {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}
