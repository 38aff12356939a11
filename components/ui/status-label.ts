/**
 * What a run's status badge says. A run's status is one of six (contracts/runs.ts); for an imported run the words
 * say what is true of a read: queued until a worker's import slot takes it, then importing (one pass) or
 * following, imported when a pass ends, stopped when a follow is switched off.
 */
export function runStatusLabel(status: string, kind?: string, follow?: boolean | null): string {
  if (kind !== 'import') return status;
  switch (status) {
    case 'queued':
      return 'queued · waiting for an import slot';
    case 'running':
      return follow ? 'following' : 'importing';
    case 'succeeded':
      return 'imported';
    case 'cancelled':
      return 'stopped';
    default:
      return status;
  }
}
