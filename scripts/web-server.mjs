// The web server `npm start` runs (scripts/start.mjs launches it; `next start` is not used): Next's request handler
// for the built app behind a plain node:http server whose one job is to decide who is asking. On every request it
// drops any client-sent copy of the private client-address header and sets it from the TCP peer, or, when the peer
// is one of TOOLSMITH_TRUSTED_PROXIES, from X-Forwarded-For read right to left (server/http/client-address.ts).
// Sign-in rate limits and the audit log read only that header, so a client cannot choose its own rate-limit bucket.
// Usage: node scripts/web-server.mjs PORT HOST   (the built app in .next; set-up builds it)
import http from 'node:http';
import { tsImport } from 'tsx/esm/api';
import { ROOT } from './setup.mjs';

// Files it writes (the data folder, sign-in secrets) are owner-only (server/db/private-files.ts).
process.umask(0o077);
// As `next start` does: the built app runs in production mode whatever the shell exported (set before Next loads).
process.env.NODE_ENV = 'production';
const { default: next } = await import('next');

const port = Number(process.argv[2] ?? process.env.PORT ?? 3000);
const host = process.argv[3] ?? process.env.HOST ?? '127.0.0.1';

// Only these two modules are loaded through tsx (scoped: Next's own modules load as they always do).
const { CLIENT_ADDRESS_HEADER, clientAddress, parseTrustedProxies } = await tsImport(
  '../server/http/client-address.ts',
  import.meta.url,
);
const { config } = await tsImport('../server/config.ts', import.meta.url);
let trusted;
try {
  trusted = parseTrustedProxies(config().trustedProxies.join(','));
} catch (e) {
  console.error(`toolsmith: ${e.message}`);
  process.exit(1);
}

const app = next({ dev: false, dir: ROOT, hostname: host, port });
await app.prepare();
const handle = app.getRequestHandler();

let warnedUntrusted = false;
const server = http.createServer((req, res) => {
  // Node folds repeated headers into req.headers (which Next reads); deleting the key removes every copy.
  delete req.headers[CLIENT_ADDRESS_HEADER];
  req.headers[CLIENT_ADDRESS_HEADER] = clientAddress(req.socket.remoteAddress, req.headers['x-forwarded-for'], trusted);
  if (!warnedUntrusted && trusted.entries.length === 0 && req.headers['x-forwarded-for']) {
    // Once: behind an unlisted proxy every client would share the proxy's address (one sign-in bucket).
    warnedUntrusted = true;
    console.warn(
      `toolsmith: a request from ${req.headers[CLIENT_ADDRESS_HEADER]} carried X-Forwarded-For, which is ignored: TOOLSMITH_TRUSTED_PROXIES is not set. If that address is your reverse proxy, list it there (docs/deploying-and-security.md "Client addresses").`,
    );
  }
  handle(req, res).catch((e) => {
    console.error(`request ${req.method} ${req.url?.slice(0, 200)}: ${e?.stack ?? e}`);
    if (!res.headersSent) {
      res.statusCode = 500;
      res.end('internal error');
    } else res.destroy();
  });
});
// Slow-header and idle-connection bounds (Node's defaults, stated so they stay): a client cannot hold a socket open
// by trickling headers. Live streams (server-sent events) are responses, not requests, and are unaffected.
server.headersTimeout = 60_000;
server.requestTimeout = 300_000;
server.keepAliveTimeout = 5_000;

server.on('error', (e) => {
  console.error(`toolsmith: the web server could not listen on ${host}:${port}: ${e.message}`);
  process.exit(1);
});
server.listen(port, host, () => {
  const via = trusted.entries.length
    ? `X-Forwarded-For from ${trusted.entries.join(', ')}`
    : 'the TCP peer (no trusted proxies)';
  console.log(`web server on http://${host.includes(':') ? `[${host}]` : host}:${port}; client addresses from ${via}`);
});

const stop = (code) => () => {
  server.close();
  process.exit(code);
};
process.on('SIGTERM', stop(143));
process.on('SIGINT', stop(130));
