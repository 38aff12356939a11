/**
 * What a share link of a run must not show of the server: an imported run's folder on the server
 * (its recipe's `imported.path`, the status and log lines that name it) and the worker's host name and pid (the
 * "worker HOST-PID started …" lines). Signed-in researchers still see them; the share payload is redacted here. Pure.
 */

/** What stands for the imported folder in a shared text. */
export const SHARED_FOLDER = '(the imported folder)';

const WORKER_LINE = /\bworker \S+ (started|shut down)/g;

/** A text with the imported folder (when there is one) and a worker's id replaced. */
export function sharedText(text: string, folder: string | null): string {
  const out = folder ? text.split(folder).join(SHARED_FOLDER) : text;
  return out.replace(WORKER_LINE, 'a worker $1');
}

/** Every string of a JSON-like value through sharedText (an event's data, a recipe). */
export function sharedValue<T>(v: T, folder: string | null): T {
  if (typeof v === 'string') return sharedText(v, folder) as T;
  if (Array.isArray(v)) return v.map((x) => sharedValue(x, folder)) as T;
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, sharedValue(x, folder)])) as T;
  return v;
}

/** An imported run's recipe without its server folder. */
export function sharedRecipeSpec(spec: unknown, folder: string | null): unknown {
  if (spec && typeof spec === 'object' && 'imported' in spec) {
    const { imported, ...rest } = spec as { imported: unknown };
    const { path: _path, ...kept } = (imported ?? {}) as Record<string, unknown>;
    return sharedValue({ ...rest, imported: kept }, folder);
  }
  return sharedValue(spec, folder);
}
