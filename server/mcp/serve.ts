/**
 * The MCP server's transports: stdio for an agent that starts `npx toolsmith mcp` itself (its token in
 * TOOLSMITH_TOKEN, checked at start and again at every call), and streamable HTTP on loopback (stateless: every
 * request carries `Authorization: Bearer TOKEN` and gets a server of its own). Tools: viewer-tools.ts.
 */
import http from 'node:http';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { TRPCError } from '@trpc/server';
import { UserError } from '../../contracts/errors.ts';
import { principalOfToken } from '../auth/tokens.ts';
import type { Database } from '../db/client.ts';
import { callerOf, type ViewerCaller, viewerMcpServer } from './viewer-tools.ts';

/** The most a request body may hold (a tool call's arguments are small). */
const MAX_BODY_BYTES = 1 << 20;
const USER_AGENT = 'toolsmith mcp';

/** A caller acting for `token` now: refused when the token is unknown, revoked or expired, or its user disabled. */
async function callerForToken(db: Database, token: string): Promise<ViewerCaller> {
  const principal = await principalOfToken(db, token);
  if (!principal)
    throw new TRPCError({
      code: 'UNAUTHORIZED',
      message: 'the API token is unknown, revoked or expired, or its user is disabled',
    });
  return callerOf({ db, principal, userAgent: USER_AGENT });
}

export interface McpOptions {
  db: Database;
  publicUrl: string;
  version: string;
}

/** Serve one agent on stdin/stdout until stdin ends. */
export async function serveMcpStdio(o: McpOptions, token: string | undefined): Promise<void> {
  if (!token)
    throw new UserError('no API token: set TOOLSMITH_TOKEN', {
      field: 'TOOLSMITH_TOKEN',
      fix: 'create one with `npx toolsmith token create EMAIL --scope read` and put it in the agent’s environment for this command',
    });
  try {
    await callerForToken(o.db, token);
  } catch (e) {
    throw new UserError((e as Error).message, { field: 'TOOLSMITH_TOKEN' });
  }
  const server = viewerMcpServer({ ...o, caller: () => callerForToken(o.db, token) });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close();
}

function bearer(req: http.IncomingMessage): string | null {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  return m ? m[1]! : null;
}

function refuse(res: http.ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message }, id: null }));
}

async function readBody(req: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new UserError(`the request body is over ${MAX_BODY_BYTES} bytes`);
    chunks.push(c as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** Streamable HTTP at POST /mcp on host:port (loopback by default); resolves once listening. */
export async function serveMcpHttp(o: McpOptions, at: { host: string; port: number }): Promise<http.Server> {
  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (new URL(req.url ?? '/', 'http://x').pathname !== '/mcp')
      return refuse(res, 404, 'not found: the endpoint is /mcp');
    // Stateless: no sessions, so no server-to-client stream (GET) and nothing to end (DELETE).
    if (req.method !== 'POST') return refuse(res, 405, 'only POST: this server keeps no sessions', { allow: 'POST' });
    const token = bearer(req);
    if (!token)
      return refuse(res, 401, 'an API token is needed: Authorization: Bearer TOKEN', { 'www-authenticate': 'Bearer' });
    let caller: ViewerCaller;
    try {
      caller = await callerForToken(o.db, token);
    } catch (e) {
      return refuse(res, 401, (e as Error).message, { 'www-authenticate': 'Bearer error="invalid_token"' });
    }
    let body: unknown;
    try {
      body = await readBody(req);
    } catch (e) {
      return refuse(res, 400, e instanceof UserError ? e.message : 'the body is not JSON');
    }
    // Stateless: a request is one list or one tool call, so the token checked above is checked once per call, as the
    // stdio server checks it, and a revocation holds from the next request.
    const server = viewerMcpServer({ ...o, caller: async () => caller });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  };
  const srv = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      // Said to the operator, not to whoever sent the request.
      console.error(`[mcp] ${req.method} ${req.url}: ${(e as Error).stack ?? e}`);
      if (!res.headersSent) refuse(res, 500, 'internal error (the server log has it)');
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    srv.once('error', reject);
    srv.listen(at.port, at.host, () => resolve());
  });
  return srv;
}
