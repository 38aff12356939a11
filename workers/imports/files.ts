/**
 * A followed file's new whole lines from a byte offset on. A half-written last line is not yet written: it is left for
 * the next read. Lines are read in chunks, so memory stays bounded whatever the file's size.
 */
import fs from 'node:fs';

export interface LineChunk {
  /** Whole lines, without their newline, each with its 1-based number. */
  lines: { text: string; line: number }[];
  /** The byte offset after the last whole line: where the next read starts. */
  offset: number;
  /** The number of the last whole line. */
  line: number;
}

/**
 * Whole lines of a file from `offset` on, up to about `maxBytes` of them per call (at least one line, however
 * long). Bytes after the last newline are a line still being written: not returned, not counted.
 */
export function readLines(
  abs: string,
  from: { offset: number; line: number },
  maxBytes = 4 * 1024 * 1024,
): LineChunk | null {
  let fd: number;
  try {
    fd = fs.openSync(abs, 'r');
  } catch {
    return null;
  }
  try {
    const size = fs.fstatSync(fd).size;
    if (size <= from.offset) return { lines: [], offset: from.offset, line: from.line };
    const parts: Buffer[] = [];
    let pos = from.offset;
    let end = -1;
    // Read until the chunk holds at least one newline and maxBytes, or the file ends.
    while (pos < size) {
      const buf = Buffer.allocUnsafe(Math.min(1024 * 1024, size - pos));
      const n = fs.readSync(fd, buf, 0, buf.length, pos);
      if (n <= 0) break;
      const got = buf.subarray(0, n);
      parts.push(got);
      pos += n;
      const nl = got.lastIndexOf(0x0a);
      if (nl >= 0) end = pos - n + nl + 1;
      if (end >= 0 && pos - from.offset >= maxBytes) break;
    }
    if (end < 0) return { lines: [], offset: from.offset, line: from.line };
    const bytes = Buffer.concat(parts).subarray(0, end - from.offset);
    const lines: { text: string; line: number }[] = [];
    let line = from.line;
    let start = 0;
    for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, start)) {
      line++;
      const text = bytes.toString('utf8', start, i).replace(/\r$/, '');
      if (text.trim() !== '') lines.push({ text, line });
      start = i + 1;
    }
    return { lines, offset: end, line };
  } finally {
    fs.closeSync(fd);
  }
}

/** Size and modification time, or null when the file is gone. */
export function statOf(abs: string): { size: number; mtimeMs: number } | null {
  try {
    const st = fs.statSync(abs);
    return { size: st.size, mtimeMs: st.mtimeMs };
  } catch {
    return null;
  }
}
