// The parts of `npm test`, each with one name: the word that runs it alone (`npm test -- NAME`), the tag on its
// output lines (`[NAME] ✔ …`) and its line in the summary. A file's header marks which integration part runs it
// (`@no-database`, `@alone: why`, `@postgresql: why`; docs/testing.md). Pure: scripts/test.mjs runs them.

/** In the order the summary lists them. */
export const PARTS = [
  { name: 'lint', about: 'format and lint (biome ci)' },
  { name: 'unit', about: 'tests/unit/' },
  { name: 'sqlite', about: 'the integration files that use a database, on SQLite' },
  { name: 'postgresql', about: 'the integration files marked @postgresql, on a throwaway PostgreSQL cluster' },
  { name: 'no-database', about: 'the integration files marked @no-database: sandbox, engines, trainer, rollouts' },
  { name: 'alone', about: 'the integration files marked @alone: load on the whole machine, nothing beside them' },
  { name: 'model', about: 'tests/model/: the real model, SmolLM2-135M from PyPI' },
  { name: 'ray', about: 'tests/ray/: a real Ray cluster in a network namespace' },
  { name: 'e2e', about: 'e2e/ in Chromium' },
];

/** Words that run several parts. */
export const GROUPS = { integration: ['sqlite', 'postgresql', 'no-database', 'alone'] };

/** The names of the parts the command line's words ask for: every part with no word; an unknown word throws, naming
 *  the known ones (a misspelt part would otherwise run nothing and pass). */
export function partsWanted(words) {
  if (words.length === 0) return new Set(PARTS.map((p) => p.name));
  const wanted = new Set();
  for (const w of words) {
    const names = GROUPS[w] ?? (PARTS.some((p) => p.name === w) ? [w] : null);
    if (!names)
      throw new Error(
        `no test part named "${w}" (one of: ${[...PARTS.map((p) => p.name), ...Object.keys(GROUPS)].join(', ')}; or test files by path)`,
      );
    for (const n of names) wanted.add(n);
  }
  return wanted;
}

/** A part's description by name, for its heading. */
export const aboutPart = (name) => PARTS.find((p) => p.name === name)?.about ?? name;
