/**
 * `npx toolsmith mcp`: the workbench for an agent, over the Model Context Protocol (server/mcp/): read-only tools to
 * list runs, read metrics, search and open trajectories and cite them as links, answering only what the API token's
 * user may see. stdio by default (the token in TOOLSMITH_TOKEN); `--http PORT` serves streamable HTTP at /mcp on
 * loopback instead (`--host` to choose; each request brings its token as `Authorization: Bearer`).
 */
import { UserError } from '../contracts/errors.ts';
import { config } from '../server/config.ts';
import { openDatabase } from '../server/db/client.ts';
import { serveMcpHttp, serveMcpStdio } from '../server/mcp/serve.ts';
import { codeVersion } from '../server/version.ts';
import { parseFlags } from './args.ts';
import type { Command } from './command.ts';

export const mcpCommand: Command = {
  name: 'mcp',
  summary: 'serve the workbench to an agent over MCP: read-only, as the API token’s user (stdio, or --http PORT)',
  usage:
    'npx toolsmith mcp                      stdio; the token in TOOLSMITH_TOKEN\n' +
    'npx toolsmith mcp --http PORT [--host 127.0.0.1]   streamable HTTP at /mcp; Authorization: Bearer TOKEN',
  async run(args) {
    const f = parseFlags(args, { http: 'number', host: 'string' });
    const host = (f.host as string | undefined) ?? '127.0.0.1';
    if (f.http !== undefined && (!Number.isInteger(f.http) || (f.http as number) < 0 || (f.http as number) > 65535))
      throw new UserError(`--http: ${f.http} is not a port (0-65535)`, { field: '--http' });
    const db = await openDatabase(config().databaseUrl);
    const o = { db, publicUrl: config().publicUrl, version: codeVersion() };
    if (f.http === undefined) {
      try {
        await serveMcpStdio(o, process.env.TOOLSMITH_TOKEN?.trim() || undefined);
      } finally {
        await db.close();
      }
      return 0;
    }
    const srv = await serveMcpHttp(o, { host, port: f.http as number });
    const addr = srv.address();
    const port = typeof addr === 'object' && addr ? addr.port : f.http;
    console.log(`MCP (streamable HTTP) at http://${host}:${port}/mcp — read-only; send Authorization: Bearer TOKEN`);
    await new Promise<void>((resolve) => {
      for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => resolve());
    });
    await new Promise<void>((resolve) => srv.close(() => resolve()));
    await db.close();
    return 0;
  },
};
