// Types for what TypeScript imports of scripts/setup.mjs (plain JS: it runs before node_modules exists).
export const ROOT: string;
/** chmod -R go-rwx on the data folder (and a models folder kept elsewhere); returns how many paths it changed. */
export function tightenDataDir(dirs?: string[]): number;
