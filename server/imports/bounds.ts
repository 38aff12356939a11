/**
 * How much of a foreign run's folder an import reads: every limit by name, and the pure checks of a record
 * against them. A folder under an import root is written by someone else, so nothing in it may make a reader hold
 * unbounded memory, time or stored bytes. docs/importing-runs.md "Open runs trained elsewhere" lists them (Contained,
 * bounded reads).
 */

export interface ImportLimits {
  /** A file larger than this is refused by name (lines and Parquet are read in pieces; this bounds a pass's time). */
  fileBytes: number;
  /** A JSONL line longer than this is a malformed line (with its number), skipped without being held whole. */
  lineBytes: number;
  /** A whole-file JSON document (ATIF, rLLM) larger than this is refused: it is parsed whole. */
  documentBytes: number;
  /** One record (a Parquet row) larger than this as JSON is refused with its place. */
  recordBytes: number;
  /** A Parquet row group that decodes (by its metadata) to more than this is refused before it is decoded. */
  rowGroupBytes: number;
  /** Arrays and objects nested deeper than this are refused with their place (mappers and viewers recurse). */
  depth: number;
  /** Malformed records kept with their place per pass; beyond it they are counted, not kept. */
  problemsKept: number;
  /** Lines handed over per read: a chunk of many short bad lines stays small. */
  linesPerChunk: number;
  /** The folder walk's depth below the run's folder and the entries it looks at. */
  walkDepth: number;
  walkEntries: number;
}

const MiB = 1024 * 1024;

export const IMPORT_LIMITS: ImportLimits = {
  fileBytes: 4 * 1024 * MiB,
  lineBytes: 8 * MiB,
  documentBytes: 32 * MiB,
  recordBytes: 8 * MiB,
  rowGroupBytes: 256 * MiB,
  depth: 64,
  problemsKept: 1000,
  linesPerChunk: 10_000,
  walkDepth: 16,
  walkEntries: 200_000,
};

/** Harbor's verifier/reward.txt holds one number: more than this is not a reward file. */
export const REWARD_FILE_BYTES = 4096;

/**
 * The nesting depth of a JSON text, counted up to `max + 1` (a scan of brackets outside strings; the text need not be
 * valid JSON). Checked before JSON.parse so that a deep document is refused before anything recurses over it.
 */
export function jsonDepthOver(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

/**
 * Why a decoded record (a Parquet row) is refused: nested deeper than `depth`, or larger than `bytes` as JSON (an
 * estimate from below: strings by their UTF-16 length, numbers by their decimal length). Stops at the first excess,
 * so a huge row is not walked whole. Null when it fits.
 */
export function recordExcess(value: unknown, limits: { depth: number; recordBytes: number }): string | null {
  let bytes = 0;
  const stack: { v: unknown; d: number }[] = [{ v: value, d: 0 }];
  while (stack.length > 0) {
    const { v, d } = stack.pop() as { v: unknown; d: number };
    if (typeof v === 'string') bytes += v.length + 2;
    else if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') bytes += String(v).length;
    else if (v === null || v === undefined) bytes += 4;
    else if (v instanceof Uint8Array) bytes += v.byteLength * 2;
    else if (v instanceof Date) bytes += 26;
    else if (typeof v === 'object') {
      if (d >= limits.depth) return `nested deeper than ${limits.depth} levels`;
      bytes += 2;
      if (Array.isArray(v)) for (const x of v) stack.push({ v: x, d: d + 1 });
      else
        for (const [k, x] of Object.entries(v)) {
          bytes += k.length + 4;
          stack.push({ v: x, d: d + 1 });
        }
    }
    if (bytes > limits.recordBytes) return `larger than ${limits.recordBytes} bytes as JSON`;
  }
  return null;
}
