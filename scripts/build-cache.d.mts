// Types for scripts/build-cache.mjs (plain JS: set-up runs without a TypeScript loader).
export function buildCacheDir(): string;
export function writeManifest(dir: string): void;
export function verifyManifest(dir: string): boolean;
export function cacheEntryDir(name: string, key: string): string | null;
export function writeStatManifest(dir: string): void;
export function verifyStatManifest(dir: string): boolean;
