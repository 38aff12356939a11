export const PART_MARKER: string;
export function holdsMarker(environ: string, id: string): boolean;
export function markedProcesses(id: string): { pid: number; command: string }[];
export function leftoverProcesses(id: string, graceMs?: number): Promise<{ pid: number; command: string }[]>;
