// Types for scripts/build-cache.mjs (plain JS: set-up runs without a TypeScript loader).
export function buildCacheDir(): string;
export function writeManifest(dir: string): void;
export function verifyManifest(dir: string): boolean;
export function cacheEntryDir(name: string, key: string): string | null;
export function writeStatManifest(dir: string): void;
export function verifyStatManifest(dir: string): boolean;
export interface CacheEntry {
  dir: string;
  ready(): boolean;
  begin(): void;
  seal(): void;
  save(fill: (dir: string) => void, warn?: (message: string) => void): void;
}
export function cacheEntry(name: string, key: string, check?: 'sha256' | 'stat' | 'complete'): CacheEntry | null;
export function lockEntry(entry: CacheEntry, timeoutMs: number): Promise<() => void>;
