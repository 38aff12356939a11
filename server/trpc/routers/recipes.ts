import { TRPCError } from '@trpc/server';
import { z } from 'zod';
import { researcherProcedure, viewerProcedure, router, type Context } from '../init.ts';
import type { Principal } from '../../../contracts/access.ts';
import { UserError } from '../../../contracts/errors.ts';
import { RUN_PLACEMENTS } from '../../../contracts/jobs.ts';
import {
  createRecipeVersion,
  getRecipe,
  listRecipes,
  listRecipeVersions,
  recipeNameOwner,
} from '../../store/recipes.ts';
import { validateRecipe } from '../../../contracts/recipe.ts';
import { diffSpecs } from '../../../contracts/recipe-diff.ts';
import { EMBEDDED_ARITH_INPUT, MICRO_INPUT } from '../../recipes/defaults.ts';
import { launchTraining, rayConfigured } from '../../lifecycle.ts';
import { designerPreflight } from '../../recipes/preflight.ts';

const id = z.string().min(1).max(100);
const name = z.string().min(1).max(100);
const version = z
  .number()
  .int()
  .min(1)
  .max(2 ** 31 - 1);
const seed = z
  .number()
  .int()
  .min(0)
  .max(2 ** 31 - 1);

/** `{id}` or `{name, version?}`: exactly one of id / name. */
const recipeRef = z
  .object({ id: id.optional(), name: name.optional(), version: version.optional() })
  .superRefine((v, ctx) => {
    if ((v.id === undefined) === (v.name === undefined))
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'give id, or name (with an optional version), not both' });
    if (v.id !== undefined && v.version !== undefined)
      ctx.addIssue({ code: 'custom', path: ['version'], message: 'version goes with name, not with id' });
  });

async function mustGet(db: Parameters<typeof getRecipe>[0], by: Parameters<typeof getRecipe>[1]) {
  const r = await getRecipe(db, by);
  if (!r) {
    const what = 'id' in by ? by.id : `"${by.name}"${by.version != null ? ` version ${by.version}` : ''}`;
    throw new TRPCError({ code: 'NOT_FOUND', message: `recipe ${what} not found` });
  }
  return r;
}

/**
 * A recipe name belongs to whoever saved its first version; built-ins (no author) to the admins. Others save a copy
 * under a new name, so nobody can make the Launch button or `toolsmith train --recipe` run their version of it.
 */
async function assertMayWriteRecipe(db: Context['db'], p: Principal, name: string): Promise<void> {
  if (p.role === 'admin') return;
  const owner = await recipeNameOwner(db, name);
  if (owner !== undefined && owner !== p.userId) {
    throw new TRPCError({
      code: 'FORBIDDEN',
      message: `recipe "${name}" belongs to ${owner ? 'another user' : 'the built-ins'}: save your changes under a new name (clone it)`,
    });
  }
}

export const recipesRouter = router({
  /** The latest version of each name (summary: stages, total steps, number of versions), by name. */
  list: viewerProcedure.query(({ ctx }) => listRecipes(ctx.db)),

  /** One stored version with its full spec: by id, or by name (latest, or `version`). */
  get: viewerProcedure
    .input(recipeRef)
    .query(({ ctx, input }) =>
      mustGet(ctx.db, input.id !== undefined ? { id: input.id } : { name: input.name!, version: input.version }),
    ),

  /** Every version of a name, newest first (NOT_FOUND when the name has none). */
  versions: viewerProcedure.input(z.object({ name })).query(async ({ ctx, input }) => {
    const rows = await listRecipeVersions(ctx.db, input.name);
    if (rows.length === 0) throw new TRPCError({ code: 'NOT_FOUND', message: `recipe "${input.name}" not found` });
    return rows;
  }),

  /**
   * Inline validation for the designer: `{ok: true, recipe}` (defaults filled in) or `{ok: false, errors: [{path,
   * message}]}` with dotted paths ("stages.1.keep"). Never throws for an invalid spec.
   */
  validate: viewerProcedure.input(z.object({ spec: z.unknown() })).query(({ input }) => validateRecipe(input.spec)),

  /** The worker's preflight with what the web server knows: what is missing, and the fix where there is one. */
  preflight: viewerProcedure
    .input(z.object({ spec: z.unknown() }))
    .query(({ ctx, input }) => designerPreflight(ctx.db, input.spec)),

  /**
   * Store the spec as the next version of its name (`name`, or the spec's own `name`): version 1 for a new name,
   * so a clone is a save under a new name. Unchanged from the latest version → nothing written, status 'unchanged'.
   */
  save: researcherProcedure
    .input(
      z.object({
        spec: z.unknown(),
        name: name.optional(),
        note: z.string().max(2000).nullish(),
        parentId: id.nullish(),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const specName =
        input.spec !== null && typeof input.spec === 'object' && !Array.isArray(input.spec)
          ? (input.spec as { name?: unknown }).name
          : undefined;
      const recipeName = input.name ?? (typeof specName === 'string' ? specName : undefined);
      if (recipeName === undefined) throw new UserError('recipe: name: a recipe needs a name', { field: 'spec.name' });
      await assertMayWriteRecipe(ctx.db, ctx.principal, recipeName);
      return createRecipeVersion(ctx.db, recipeName, input.spec, {
        note: input.note,
        parentId: input.parentId,
        createdBy: ctx.principal.userId,
      });
    }),

  /** Leaf differences from version a to version b: [{path: "stages.1.lr", kind, a, b}]. */
  diff: viewerProcedure.input(z.object({ a: id, b: id })).query(async ({ ctx, input }) => {
    const [a, b] = [await mustGet(ctx.db, { id: input.a }), await mustGet(ctx.db, { id: input.b })];
    return diffSpecs(a.spec, b.spec);
  }),

  /**
   * Start a training run from a stored version (`id`) or an inline spec (`spec`, stored first as a version of its
   * name); `seed` overrides the recipe's. Creates the run and its queued "train" job.
   */
  launch: researcherProcedure
    .input(
      z
        .object({
          id: id.optional(),
          spec: z.unknown().optional(),
          name: z.string().min(1).max(200).optional(),
          seed: seed.optional(),
          /** Where the run runs: the deployment's workers (default) or its Ray cluster (docs/scaling-out.md "Ray"). */
          cluster: z.enum(RUN_PLACEMENTS).optional(),
        })
        .superRefine((v, ctx) => {
          if ((v.id === undefined) === (v.spec === undefined))
            ctx.addIssue({ code: 'custom', path: ['id'], message: 'give a recipe id or an inline spec (one of them)' });
        }),
    )
    .mutation(async ({ ctx, input }) => {
      if (input.id !== undefined) await mustGet(ctx.db, { id: input.id });
      else {
        const n =
          input.spec !== null && typeof input.spec === 'object' ? (input.spec as { name?: unknown }).name : undefined;
        if (typeof n === 'string') await assertMayWriteRecipe(ctx.db, ctx.principal, n); // an inline spec is saved as a version of its name
      }
      const r = await launchTraining(ctx.db, input.id !== undefined ? { id: input.id } : { spec: input.spec }, {
        name: input.name,
        seed: input.seed,
        createdBy: ctx.principal.userId,
        cluster: input.cluster,
      });
      return { runId: r.runId, jobId: r.jobId };
    }),

  /** Where runs can go besides the workers: whether an operator configured a Ray cluster. */
  placements: viewerProcedure.query(() => ({ ray: rayConfigured() })),

  /** Templates for "new recipe": the built-in recipes as written (inputs, before defaults are filled in). */
  defaults: viewerProcedure.query(() => ({ embedded: EMBEDDED_ARITH_INPUT, micro: MICRO_INPUT })),
});
