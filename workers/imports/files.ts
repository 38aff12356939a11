/**
 * A followed file's new whole lines from a byte offset on. A half-written last line is not yet written: it is left for
 * the next read. Lines are read in blocks and a line is held only up to the line cap, so memory stays bounded
 * whatever the file holds (one line of 10 MB with no newline, millions of short ones).
 */
import fs from 'node:fs';
import type { ImportLimits } from '../../server/imports/bounds.ts';
import { openContained, RefusedFile } from '../../server/imports/open.ts';

export interface LineChunk {
  /** Whole lines, without their newline, each with its 1-based number. */
  lines: { text: string; line: number }[];
  /** Lines longer than the cap: skipped, by number. */
  overlong: number[];
  /** The unfinished last line is already longer than the cap (its number): it is not held, and not passed. */
  tailOverlong?: number;
  /** The byte offset after the last whole line: where the next read starts. */
  offset: number;
  /** The number of the last whole line. */
  line: number;
}

const BLOCK = 1024 * 1024;

/**
 * Whole lines of `file` (relative to `folder`, opened contained: server/imports/open.ts) from `from.offset` on, up to
 * about `maxBytes` and `limits.linesPerChunk` of them per call. Bytes after the last newline are a line still being
 * written: not returned, not counted. Null when the file is not there; RefusedFile when it may not be read.
 */
export function readLines(
  folder: string,
  file: string,
  from: { offset: number; line: number },
  limits: Pick<ImportLimits, 'fileBytes' | 'lineBytes' | 'linesPerChunk'>,
  maxBytes = 4 * 1024 * 1024,
): LineChunk | null {
  let f: ReturnType<typeof openContained>;
  try {
    f = openContained(folder, file, limits.fileBytes);
  } catch (e) {
    if (e instanceof RefusedFile && e.missing) return null;
    throw e;
  }
  try {
    return scanLines(f.fd, f.size, from, limits, maxBytes);
  } finally {
    f.close();
  }
}

function scanLines(
  fd: number,
  size: number,
  from: { offset: number; line: number },
  limits: Pick<ImportLimits, 'lineBytes' | 'linesPerChunk'>,
  maxBytes: number,
): LineChunk {
  const out: LineChunk = { lines: [], overlong: [], offset: from.offset, line: from.line };
  if (size <= from.offset) return out;
  const buf = Buffer.allocUnsafe(BLOCK);
  // The current line's bytes so far (copies), unless it has passed the cap: then only its end is looked for.
  let partial: Buffer[] = [];
  let partialLen = 0;
  let skipping = false;
  let pos = from.offset;
  while (pos < size) {
    const n = fs.readSync(fd, buf, 0, Math.min(BLOCK, size - pos), pos);
    if (n <= 0) break;
    let s = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, s);
      if (nl < 0 || nl >= n) {
        if (!skipping && partialLen + (n - s) > limits.lineBytes) {
          skipping = true;
          partial = [];
        } else if (!skipping) {
          partial.push(Buffer.from(buf.subarray(s, n)));
          partialLen += n - s;
        }
        break;
      }
      out.line++;
      if (skipping || partialLen + (nl - s) > limits.lineBytes) out.overlong.push(out.line);
      else {
        const text = Buffer.concat([...partial, buf.subarray(s, nl)])
          .toString('utf8')
          .replace(/\r$/, '');
        if (text.trim() !== '') out.lines.push({ text, line: out.line });
      }
      partial = [];
      partialLen = 0;
      skipping = false;
      s = nl + 1;
      out.offset = pos + s;
      if (out.lines.length + out.overlong.length >= limits.linesPerChunk) return out;
    }
    pos += n;
    if (out.offset - from.offset >= maxBytes) return out;
  }
  if (skipping) out.tailOverlong = out.line + 1;
  return out;
}
