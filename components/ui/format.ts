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

/** A JSON value as one short line for a table cell. */
export function formatValue(v: unknown, max = 120): string {
  let s: string;
  if (typeof v === 'string') s = JSON.stringify(v);
  else if (v === undefined) s = '—';
  else {
    try {
      s = JSON.stringify(v) ?? String(v);
    } catch {
      s = String(v);
    }
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

/** A metric value for a tooltip or table: integers as is, others with 4 significant digits. */
export function formatNumber(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  if (Number.isInteger(v)) return String(v);
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-3 || a >= 1e6) ? v.toExponential(3) : String(Number(v.toPrecision(4)));
}

/** A count in K/M/B (parameters, tokens): 34.7K, 4.88M, 14.77B. */
export function formatCount(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(2)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}K`;
  return String(n);
}

/** Bytes in binary units: 144.4 KiB, 27.52 GiB. */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(2)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(1)} KiB`;
  return `${n} B`;
}
