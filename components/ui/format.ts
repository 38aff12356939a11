/** Small display helpers shared by pages. */
export function formatTime(t: number | string | Date | null | undefined): string {
  if (t === null || t === undefined) return '—';
  const d = new Date(t);
  return Number.isNaN(d.getTime()) ? '—' : d.toLocaleString();
}

const COLORS: Record<string, string> = { error: '\u001b[31m', warn: '\u001b[33m', debug: '\u001b[90m', info: '' };

/** One event as a terminal line: time, level colour, message. */
export function eventLine(e: { time: number; level: string; message: string }): string {
  const ts = new Date(e.time).toISOString().slice(11, 19);
  const color = COLORS[e.level] ?? '';
  return `\u001b[90m${ts}\u001b[0m ${color}${e.message}${color ? '\u001b[0m' : ''}`;
}
