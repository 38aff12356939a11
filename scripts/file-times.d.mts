// Types for scripts/file-times.mjs (plain JS: scripts/test.mjs runs without a TypeScript loader).
export type FileTime = { file: string; ms: number };
export function playwrightFileTimes(out: string): FileTime[];
export function slowestFiles(parts: { part: string; files: FileTime[] }[], n: number): (FileTime & { part: string })[];
