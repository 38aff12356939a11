// The TCP sockets some processes hold, read from /proc (Linux): /proc/PID/fd links name socket inodes, and
// /proc/net/tcp and tcp6 (of this network namespace) give each inode's addresses and state. For tests that assert
// what a process exposes (tests/integration/trainer-dist-exposure.test.ts).
import fs from 'node:fs';

export interface TcpSocket {
  proto: 'tcp' | 'tcp6';
  address: string;
  port: number;
  state: 'LISTEN' | 'ESTABLISHED' | string;
  inode: string;
}

const STATES: Record<string, string> = { '01': 'ESTABLISHED', '0A': 'LISTEN' };

/** A /proc/net/tcp address ("0100007F:1F90": the IPv4 bytes in host order, little-endian here) as text and port. */
export function decodeProcAddress(hex: string): { address: string; port: number } {
  const [a, p] = hex.split(':') as [string, string];
  const word = (w: string) =>
    w
      .match(/../g)!
      .reverse()
      .map((b) => parseInt(b, 16));
  if (a.length === 8) return { address: word(a).join('.'), port: parseInt(p, 16) };
  const bytes = (a.match(/.{8}/g) ?? []).flatMap(word);
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i]! << 8) | bytes[2 * i + 1]!).toString(16));
  const v4mapped = groups.slice(0, 5).every((g) => g === '0') && groups[5] === 'ffff';
  return { address: v4mapped ? `::ffff:${bytes.slice(12).join('.')}` : groups.join(':'), port: parseInt(p, 16) };
}

/** Whether a decoded address is a loopback one (127.0.0.0/8, ::1 written out in full, or an IPv4-mapped 127.x). */
export function isLoopback(address: string): boolean {
  return /^127\./.test(address) || /^::ffff:127\./.test(address) || address === '0:0:0:0:0:0:0:1';
}

/** Rows of /proc/net/tcp{,6} whose inode is in `inodes`. */
export function parseProcNet(text: string, proto: 'tcp' | 'tcp6', inodes: Set<string>): TcpSocket[] {
  return text
    .split('\n')
    .slice(1)
    .flatMap((line) => {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || !inodes.has(f[9]!)) return [];
      return [{ proto, ...decodeProcAddress(f[1]!), state: STATES[f[3]!] ?? f[3]!, inode: f[9]! }];
    });
}

/** The socket inodes of a process's open files (none once it has gone). */
export function socketInodes(pid: number): string[] {
  let fds: string[];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  return fds.flatMap((fd) => {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      return m ? [m[1]!] : [];
    } catch {
      return [];
    }
  });
}

/** Every TCP socket (any state) the processes `pids` hold. */
export function tcpSockets(pids: number[]): TcpSocket[] {
  const inodes = new Set(pids.flatMap(socketInodes));
  return (['tcp', 'tcp6'] as const).flatMap((proto) =>
    parseProcNet(fs.readFileSync(`/proc/net/${proto}`, 'utf8'), proto, inodes),
  );
}

/** The processes whose process group is one of `pgids` (a group's leader and whatever it started). */
export function processesInGroups(pgids: number[]): number[] {
  const want = new Set(pgids);
  return fs
    .readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .flatMap((d) => {
      try {
        const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
        const pgrp = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
        return want.has(pgrp) ? [Number(d)] : [];
      } catch {
        return [];
      }
    });
}
