import { randomBytes } from 'node:crypto';

/** Sortable-ish unique id: time prefix (base36 ms) + 10 random bytes, so ids created later sort later. */
export function newId(prefix = ''): string {
  const time = Date.now().toString(36).padStart(9, '0');
  return `${prefix}${time}${randomBytes(10).toString('hex')}`;
}
