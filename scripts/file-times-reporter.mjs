// A node:test reporter used beside `spec` by `npm test`: one JSON line per test file, its wall time (the file's
// own process, hooks included), so that the summary can name the slowest files.
import path from 'node:path';

export default async function* fileTimes(source) {
  for await (const e of source) {
    // Node reports each file as a test named by its path when that file's process ends.
    if (e.type === 'test:complete' && e.data.nesting === 0 && e.data.file && e.data.name === e.data.file)
      yield `${JSON.stringify({ file: path.relative(process.cwd(), e.data.file), ms: Math.round(e.data.details.duration_ms) })}\n`;
  }
}
