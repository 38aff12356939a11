export { Verifier, verify, type VerifyOptions, type VerifierOptions } from './verifier.ts';
export type { Verdict, Method } from '../../contracts/trajectory.ts';
export { extractAnswer, extractGold, findBoxed, type ExtractMode } from './extract.ts';
export { normalize, parseNumber, structure } from './normalize.ts';
