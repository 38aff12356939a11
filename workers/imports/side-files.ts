/**
 * Each format's side files (pass.ts SideFiles), by format: the one place that says which formats have any. A format
 * absent here has only its rollout files.
 */
import type { ForeignFormat } from '../../contracts/foreign.ts';
import { atifSideFiles } from './formats/atif.ts';
import { primeRlSideFiles } from './formats/prime-rl.ts';
import type { SideFiles } from './pass.ts';

const SIDE_FILES: Partial<Record<ForeignFormat, SideFiles>> = {
  'prime-rl': primeRlSideFiles,
  atif: atifSideFiles,
};

export const sideFilesOf = (format: ForeignFormat): SideFiles | undefined => SIDE_FILES[format];
