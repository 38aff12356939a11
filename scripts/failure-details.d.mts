// Types for scripts/failure-details.mjs (plain JS: scripts/test.mjs runs without a TypeScript loader).
export function failureDetails(out: string): string;
export function crashDetails(out: string, code: number | null, signal: string | null): string;
