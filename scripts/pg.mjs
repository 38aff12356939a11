// A throwaway PostgreSQL cluster on 127.0.0.1 for the test suite and bench:db: created under data/pg-<port>,
// started with pg_ctl, stopped (and its folder removed) by stopPg. Uses Debian's postgresql package.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export function pgBinDir() {
  const base = '/usr/lib/postgresql';
  if (!fs.existsSync(base)) return null;
  const versions = fs
    .readdirSync(base)
    .filter((v) => fs.existsSync(path.join(base, v, 'bin/pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(base, versions[0], 'bin') : null;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

/** Start a cluster; returns { url, adminUrl, dir, stop }. The admin URL can CREATE DATABASE. */
export async function startPg(root) {
  const bin = pgBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found: apt-get install -y postgresql');
  const port = await freePort();
  const dir = path.join(os.tmpdir(), `toolsmith-pg-${port}`);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  // initdb refuses to run as root: run it (and the server) as the postgres user when we are root.
  const asRoot = process.getuid?.() === 0;
  const run = (cmd, args) => {
    const full = asRoot
      ? ['runuser', ['-u', 'postgres', '--', path.join(bin, cmd), ...args]]
      : [path.join(bin, cmd), args];
    const r = spawnSync(full[0], full[1], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${(r.stderr || r.stdout).trim()}`);
  };
  if (asRoot) execFileSync('chown', ['postgres:postgres', dir]);
  const data = path.join(dir, 'data');
  run('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  run('pg_ctl', [
    '-D',
    data,
    '-l',
    path.join(dir, 'log'),
    '-w',
    '-t',
    '60',
    'start',
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=300`,
  ]);
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    port,
    dir,
    adminUrl,
    url: (db) => `postgres://postgres@127.0.0.1:${port}/${db}`,
    stop() {
      try {
        run('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop']);
      } catch {
        /* already stopped */
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
