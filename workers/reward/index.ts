export { Verifier, verify, type VerifyResult, type VerifyOptions, type VerifierOptions, type Method } from './verifier.ts';
export { extractAnswer, extractGold, findBoxed, type ExtractMode } from './extract.ts';
export { normalize, parseNumber, structure } from './normalize.ts';
