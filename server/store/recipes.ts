/**
 * Recipe versions in the database. A version is immutable (a trigger rejects any UPDATE of name, version, parentId
 * or spec; see prisma/migrations/* /0002_immutable_recipes.sql): editing a recipe writes version N+1 whose parentId
 * is the version it was made from. The stored spec is the parsed recipe with every default filled in, so a later
 * change of a default never changes what an old version means.
 */
import type { Database } from '../db/client.ts';
import { UserError } from '../../contracts/errors.ts';
import { newId } from '../ids.ts';
import { isUniqueViolation } from './events.ts';
import { BUILTIN_RECIPES } from '../recipes/defaults.ts';
import { parseRecipe, totalSteps, type Recipe } from '../../contracts/recipe.ts';
import { NAME_RE, NAME_RULE } from '../../contracts/names.ts';

export interface StoredRecipe {
  id: string;
  name: string;
  version: number;
  parentId: string | null;
  note: string | null;
  createdAt: Date;
  spec: Recipe;
}

export interface RecipeSummary {
  id: string;
  name: string;
  /** The latest version. */
  version: number;
  /** How many versions the name has. */
  versions: number;
  description: string;
  stages: { type: string; name: string }[];
  totalSteps: number;
  createdAt: Date;
}

type Row = {
  id: string;
  name: string;
  version: number;
  parentId: string | null;
  note: string | null;
  createdAt: Date;
  spec: string;
};

/** The latest version's row of a name, or null when the name has none. */
function latestRow(db: Database, name: string) {
  return db.prisma.recipe.findFirst({ where: { name }, orderBy: { version: 'desc' } });
}

function fromRow(r: Row): StoredRecipe {
  return {
    id: r.id,
    name: r.name,
    version: r.version,
    parentId: r.parentId,
    note: r.note,
    createdAt: r.createdAt,
    spec: JSON.parse(r.spec) as Recipe,
  };
}

/** JSON with object keys sorted, so two equal recipes compare equal whatever their key order. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(
          Object.entries(x as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
        )
      : x,
  );
}

export interface CreateRecipeResult {
  status: 'created' | 'unchanged';
  recipe: StoredRecipe;
}

/**
 * Validate `spec` and store it as the next version of `name` (version 1 for a new name). The spec's own `name`
 * may be left out (it is set to `name`); a different one is an error. If the spec equals the latest version's,
 * nothing is written and that version is returned (status 'unchanged'). parentId defaults to the latest version.
 */
export async function createRecipeVersion(
  db: Database,
  name: string,
  spec: unknown,
  opts: { note?: string | null; parentId?: string | null; createdBy?: string | null } = {},
): Promise<CreateRecipeResult> {
  if (!NAME_RE.test(name)) {
    throw new UserError(`recipe name "${name}" is not allowed`, { fix: NAME_RULE, field: 'name' });
  }
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec))
    throw new UserError('recipe: (input): expected a JSON object');
  const given = (spec as { name?: unknown }).name;
  if (given !== undefined && given !== name) {
    throw new UserError(`recipe: name: the spec says "${String(given)}" but it is being saved as "${name}"`, {
      fix: "make them match or leave the spec's name out",
      field: 'name',
    });
  }
  const recipe = parseRecipe({ ...spec, name });
  const json = canonicalJson(recipe);

  // Two saves of one name at once: the loser of the (name, version) race retries with the next version.
  for (let attempt = 0; ; attempt++) {
    const latest = await latestRow(db, name);
    if (latest && canonicalJson(JSON.parse(latest.spec)) === json)
      return { status: 'unchanged', recipe: fromRow(latest) };
    if (opts.parentId) {
      const parent = await db.prisma.recipe.findUnique({ where: { id: opts.parentId }, select: { id: true } });
      if (!parent) throw new UserError(`recipe: parentId: no recipe version ${opts.parentId}`, { field: 'parentId' });
    }
    try {
      const row = await db.prisma.recipe.create({
        data: {
          id: newId('rcp_'),
          name,
          version: (latest?.version ?? 0) + 1,
          parentId: opts.parentId !== undefined ? opts.parentId : (latest?.id ?? null),
          spec: json,
          note: opts.note ?? null,
          createdBy: opts.createdBy ?? null,
        },
      });
      return { status: 'created', recipe: fromRow(row) };
    } catch (e) {
      if (!isUniqueViolation(e) || attempt >= 20) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 5 * (attempt + 1)));
    }
  }
}

/** One version by id, or by name (the latest version, or `version`); null if there is none. */
export async function getRecipe(
  db: Database,
  by: { id: string } | { name: string; version?: number },
): Promise<StoredRecipe | null> {
  const row =
    'id' in by
      ? await db.prisma.recipe.findUnique({ where: { id: by.id } })
      : by.version != null
        ? await db.prisma.recipe.findUnique({ where: { name_version: { name: by.name, version: by.version } } })
        : await latestRow(db, by.name);
  return row ? fromRow(row) : null;
}

/** Every version of one name, newest first. */
export async function listRecipeVersions(db: Database, name: string): Promise<StoredRecipe[]> {
  const rows = await db.prisma.recipe.findMany({ where: { name }, orderBy: { version: 'desc' } });
  return rows.map(fromRow);
}

/** The latest version of each name with its number of versions, by name. */
export async function listRecipes(db: Database): Promise<RecipeSummary[]> {
  const groups = await db.prisma.recipe.groupBy({
    by: ['name'],
    _max: { version: true },
    _count: { _all: true },
    orderBy: { name: 'asc' },
  });
  if (groups.length === 0) return [];
  const rows = await db.prisma.recipe.findMany({
    where: { OR: groups.map((g) => ({ name: g.name, version: g._max.version ?? 0 })) },
  });
  const byName = new Map(rows.map((r) => [r.name, r]));
  const out: RecipeSummary[] = [];
  for (const g of groups) {
    const r = byName.get(g.name);
    if (!r) continue;
    const spec = JSON.parse(r.spec) as Recipe;
    let steps = 0;
    try {
      steps = totalSteps(spec);
    } catch {
      /* a spec from an older schema: no step count */
    }
    out.push({
      id: r.id,
      name: r.name,
      version: r.version,
      versions: g._count._all,
      createdAt: r.createdAt,
      description: spec.description ?? '',
      stages: (spec.stages ?? []).map((s) => ({ type: s.type, name: s.name })),
      totalSteps: Number.isFinite(steps) ? steps : 0,
    });
  }
  return out;
}

const BUILTIN_NOTE = 'built-in default';

/**
 * Create the built-in recipes (embedded-arith, …) that do not exist yet under their name, and bring a built-in up to
 * the code's current defaults when its latest version is still a built-in one (an upgraded checkout's data folder
 * would otherwise keep the defaults it was first seeded with); a version anyone saved since is left alone.
 * Idempotent. Returns the recipes created as version 1.
 */
export async function seedDefaultRecipes(db: Database): Promise<StoredRecipe[]> {
  const created: StoredRecipe[] = [];
  for (const input of BUILTIN_RECIPES) {
    const name = input.name;
    const latest = await db.prisma.recipe.findFirst({
      where: { name },
      orderBy: { version: 'desc' },
      select: { note: true },
    });
    if (latest && !latest.note?.startsWith(BUILTIN_NOTE)) continue;
    const r = await createRecipeVersion(db, name, input, { note: latest ? `${BUILTIN_NOTE} (updated)` : BUILTIN_NOTE });
    if (r.status === 'created' && r.recipe.version === 1) created.push(r.recipe);
  }
  return created;
}

/** The author of a recipe name's first version (null: a built-in); undefined when the name is new. */
export async function recipeNameOwner(db: Database, name: string): Promise<string | null | undefined> {
  const first = await db.prisma.recipe.findFirst({
    where: { name },
    orderBy: { version: 'asc' },
    select: { createdBy: true },
  });
  return first ? first.createdBy : undefined;
}
