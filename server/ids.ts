import { randomBytes } from 'node:crypto';

const RANDOM_BITS = 80n; // 20 hex digits after the 9 base36 digits of the time
const random = (bytes: number) => BigInt(`0x${randomBytes(bytes).toString('hex')}`);
let last = { time: -1, rand: 0n };

/**
 * Sortable unique id: time prefix (base36 ms) + 80 random bits, so ids created later sort later — within one
 * millisecond too: there the random part counts up from the last id's by a random step (the queue leases jobs of
 * equal priority and due time in id order, so two enqueued in the same millisecond would otherwise be leased in a
 * random order). A clock that steps back keeps the last time.
 */
export function newId(prefix = ''): string {
  const now = Date.now();
  if (now > last.time)
    last = { time: now, rand: random(10) >> 1n }; // top bit clear: room to count up
  else {
    const rand = last.rand + 1n + random(5);
    last = rand >> RANDOM_BITS ? { time: last.time + 1, rand: random(10) >> 1n } : { time: last.time, rand };
  }
  return `${prefix}${last.time.toString(36).padStart(9, '0')}${last.rand.toString(16).padStart(20, '0')}`;
}
