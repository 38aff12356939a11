/**
 * Pure dataset-file parsers. Each returns rows as plain objects, each with the 1-based line (JSONL, CSV) or
 * row (Parquet) it came from, so that later validation can name it. A malformed file throws a ParseError that
 * names the line and the reason; the importer turns it into a UserError that also names the file.
 */
import type { AsyncBuffer } from 'hyparquet';

export type Row = Record<string, unknown>;
/** One parsed record and where it came from: `line` for text formats, `row` (1-based) for Parquet. */
export interface SourceRow {
  data: Row;
  line?: number;
  row: number;
}

export class ParseError extends Error {
  readonly line?: number;
  readonly row?: number;
  readonly reason: string;
  constructor(reason: string, where: { line?: number; row?: number }) {
    super(`${where.line !== undefined ? `line ${where.line}` : `row ${where.row}`}: ${reason}`);
    this.name = 'ParseError';
    this.reason = reason;
    this.line = where.line;
    this.row = where.row;
  }
}

/** Strip a UTF-8 byte-order mark. */
function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

/** JSON Lines: one JSON object per line; blank lines are skipped; anything else is an error naming its line. */
export function parseJsonl(text: string): SourceRow[] {
  const out: SourceRow[] = [];
  const lines = stripBom(text).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i].endsWith('\r') ? lines[i].slice(0, -1) : lines[i];
    if (raw.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      throw new ParseError(`invalid JSON (${(e as Error).message.split('\n')[0]})`, { line: i + 1 });
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new ParseError(
        `expected a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`,
        { line: i + 1 },
      );
    }
    out.push({ data: value as Row, line: i + 1, row: out.length + 1 });
  }
  return out;
}

/**
 * CSV per RFC 4180: comma-separated, fields optionally enclosed in double quotes; a quoted field may contain
 * commas, CR/LF and doubled quotes (""). Records end in LF or CRLF. The first record is the header. Errors name
 * the (1-based, physical) line: an unterminated quote, a quote in the middle of an unquoted field, text after a
 * closing quote, a record with a different number of fields than the header, an empty or duplicate header.
 */
export function parseCsv(text: string): SourceRow[] {
  return csvRows(csvRecords(stripBom(text)));
}

interface CsvRecord {
  fields: string[];
  /** The physical line the record starts on. */
  line: number;
}

/** The records of a CSV text, blank lines skipped; throws on malformed quoting. */
function csvRecords(src: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let line = 1; // physical line of the current position
  let recordLine = 1;
  let fields: string[] = [];
  let field = '';
  let atFieldStart = true;
  let touched = false; // the current record has any character at all (a blank line has none)
  const endField = () => {
    fields.push(field);
    field = '';
    atFieldStart = true;
  };
  const endRecord = () => {
    endField();
    if (touched) records.push({ fields, line: recordLine });
    fields = [];
    touched = false;
  };
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '\n' || (c === '\r' && src[i + 1] === '\n')) {
      endRecord();
      i += c === '\r' ? 2 : 1;
      line++;
      recordLine = line;
      continue;
    }
    touched = true;
    if (c === ',') {
      endField();
      i++;
      continue;
    }
    if (atFieldStart && c === '"') {
      // Quoted field: read to the closing quote.
      const startLine = line;
      i++;
      let closed = false;
      while (i < src.length) {
        const d = src[i];
        if (d === '"') {
          if (src[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          closed = true;
          break;
        }
        if (d === '\n') line++;
        field += d;
        i++;
      }
      if (!closed)
        throw new ParseError(`unterminated quoted field (the quote opened on line ${startLine} is never closed)`, {
          line: startLine,
        });
      atFieldStart = false;
      const next = src[i];
      if (next !== undefined && next !== ',' && next !== '\n' && !(next === '\r' && src[i + 1] === '\n')) {
        throw new ParseError(
          `unexpected character ${JSON.stringify(next)} after a closing quote (a quote inside a quoted field must be doubled: "")`,
          { line },
        );
      }
      continue;
    }
    if (c === '"')
      throw new ParseError('a quote inside an unquoted field (enclose the field in quotes and double the quote: "")', {
        line,
      });
    field += c;
    atFieldStart = false;
    i++;
  }
  if (touched) endRecord();
  return records;
}

/** The rows of CSV records under their first record, the header (names non-empty and distinct). */
function csvRows(records: CsvRecord[]): SourceRow[] {
  if (records.length === 0) throw new ParseError('the file is empty (expected a header line)', { line: 1 });
  const header = records[0].fields.map((h) => h.trim());
  header.forEach((h, k) => {
    if (h === '') throw new ParseError(`column ${k + 1} of the header has no name`, { line: records[0].line });
    if (header.indexOf(h) !== k)
      throw new ParseError(`the header names column "${h}" twice`, { line: records[0].line });
  });
  const out: SourceRow[] = [];
  for (const r of records.slice(1)) {
    if (r.fields.length !== header.length) {
      throw new ParseError(`expected ${header.length} fields (as in the header), found ${r.fields.length}`, {
        line: r.line,
      });
    }
    const data: Row = {};
    header.forEach((h, k) => {
      data[h] = r.fields[k];
    });
    out.push({ data, line: r.line, row: out.length + 1 });
  }
  return out;
}

/** BigInt (Parquet INT64) → number when it is exact, else string; Uint8Array → base64; dates → ISO. Recursively. */
export function plainValue(v: unknown): unknown {
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Date) return v.toISOString();
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (Array.isArray(v)) return v.map(plainValue);
  if (v && typeof v === 'object') {
    const o: Row = {};
    for (const [k, x] of Object.entries(v)) o[k] = plainValue(x);
    return o;
  }
  return v;
}

/**
 * Parquet via hyparquet (pure JS) with hyparquet-compressors (zstd, gzip, brotli, lz4 beside snappy: ART writes zstd);
 * nested lists and structs come back as arrays and objects.
 */
export async function readParquet(buffer: Uint8Array | ArrayBuffer): Promise<SourceRow[]> {
  const bytes = buffer instanceof Uint8Array ? buffer : new Uint8Array(buffer);
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const { parquetReadObjects } = await import('hyparquet');
  const { compressors } = await import('hyparquet-compressors');
  let rows: Record<string, unknown>[];
  try {
    rows = await parquetReadObjects({ file: ab, compressors });
  } catch (e) {
    throw parquetError(e);
  }
  return rows.map((r, k) => ({ data: plainValue(r) as Row, row: k + 1 }));
}

/**
 * A Parquet file's rows one row group at a time, numbered from 1 across the file: memory holds one group, never the
 * whole file (an import's completions or trajectory logs). `file` reads byte ranges (hyparquet's AsyncBuffer). A group
 * whose metadata says it decodes to more than `maxGroupBytes` is refused before it is decoded (a few KB of compressed
 * repetition can decode to hundreds of MB), as a ParseError at its first row.
 */
export async function* readParquetRowGroups(
  file: AsyncBuffer,
  maxGroupBytes = Number.POSITIVE_INFINITY,
): AsyncGenerator<SourceRow[]> {
  const { parquetMetadataAsync, parquetReadObjects } = await import('hyparquet');
  const { compressors } = await import('hyparquet-compressors');
  let metadata: Awaited<ReturnType<typeof parquetMetadataAsync>>;
  try {
    metadata = await parquetMetadataAsync(file);
  } catch (e) {
    throw parquetError(e);
  }
  let start = 0;
  for (const group of metadata.row_groups) {
    const end = start + Number(group.num_rows);
    const bytes = Math.max(
      Number(group.total_byte_size),
      group.columns.reduce((n, c) => n + Number(c.meta_data?.total_uncompressed_size ?? 0), 0),
    );
    if (bytes > maxGroupBytes)
      throw new ParseError(
        `the row group of rows ${start + 1}–${end} is ${bytes} bytes uncompressed, over the cap of ${maxGroupBytes}; not read`,
        { row: start + 1 },
      );
    let rows: Record<string, unknown>[];
    try {
      rows = await parquetReadObjects({ file, metadata, rowStart: start, rowEnd: end, compressors });
    } catch (e) {
      throw parquetError(e, start + 1);
    }
    yield rows.map((r, k) => ({ data: plainValue(r) as Row, row: start + k + 1 }));
    start = end;
  }
}

function parquetError(e: unknown, row = 0): ParseError {
  const msg = (e as Error).message.split('\n')[0];
  const codec = /compression|codec|unsupported/i.test(msg)
    ? ' (readable codecs: snappy, zstd, gzip, brotli, lz4; rewrite it with compression="zstd")'
    : '';
  return new ParseError(`not a readable Parquet file: ${msg}${codec}`, { row });
}
