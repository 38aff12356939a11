// Types for scripts/test-parts.mjs (plain JS: the test runner runs without a TypeScript loader).
export const PARTS: { name: string; about: string }[];
export const GROUPS: Record<string, string[]>;
export function partsWanted(words: string[]): Set<string>;
export function aboutPart(name: string): string;
