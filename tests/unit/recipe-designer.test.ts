import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EMBEDDED_ARITH, EMBEDDED_ARITH_INPUT, MICRO_INPUT } from '../../server/recipes/defaults.ts';
import {
  EvalSourceSchema,
  RecipeSchema,
  RlStageSchema,
  SftStageSchema,
  stageSteps,
  validateRecipe,
} from '../../contracts/recipe.ts';
import {
  errorsByPath,
  getPath,
  movePath,
  parseSpecJson,
  setPath,
  specToJson,
  stableJson,
  type Spec,
} from '../../components/recipes/path.ts';
import {
  EVAL_SOURCE_FIELDS,
  RECIPE_FIELDS,
  RL_FIELDS,
  SFT_FIELDS,
  defaultText,
  newStage,
  stageNames,
  timelineOf,
  type Catalogue,
} from '../../components/recipes/fields.ts';

// ---- A walk over the zod (v4) schema: every leaf field path ------------------------------------------------------

type Def = {
  type: string;
  innerType?: unknown;
  in?: unknown;
  shape?: Record<string, unknown>;
  options?: unknown[];
  element?: unknown;
};
const defOf = (s: unknown): Def => (s as { _zod: { def: Def } })._zod.def;
const WRAPPERS = new Set(['optional', 'default', 'prefault', 'nullable', 'nonoptional', 'readonly', 'catch']);

/** Unwrap optional/default/nullable/…, and a pipe (transform) to its input. */
function core(s: unknown): Def {
  let d = defOf(s);
  for (;;) {
    if (WRAPPERS.has(d.type)) d = defOf(d.innerType);
    else if (d.type === 'pipe') d = defOf(d.in);
    else return d;
  }
}

/** An object, or a union of objects (a discriminated union). */
const isObjects = (d: Def): boolean =>
  d.type === 'object' || (d.type === 'union' && d.options!.every((o) => core(o).type === 'object'));

/** Leaf paths under `s`; an array of objects contributes "path.*.…"; `stop` paths are not entered. */
function leaves(s: unknown, prefix = '', stop: readonly string[] = []): Set<string> {
  const out = new Set<string>();
  const visit = (x: unknown, path: string) => {
    if (stop.includes(path)) return;
    const d = core(x);
    if (d.type === 'object') {
      for (const [k, v] of Object.entries(d.shape!)) visit(v, path ? `${path}.${k}` : k);
      return;
    }
    if (d.type === 'union' && isObjects(d)) {
      for (const o of d.options!) visit(o, path);
      return;
    }
    if (d.type === 'array' && isObjects(core(d.element))) {
      visit(d.element, `${path}.*`);
      return;
    }
    out.add(path);
  };
  visit(s, prefix);
  return out;
}

function assertCovers(catalogue: Catalogue, schemaLeaves: Set<string>, what: string) {
  const missing = [...schemaLeaves].filter((p) => !(p in catalogue));
  assert.deepEqual(missing, [], `${what}: fields without a catalogue entry`);
  for (const [path, f] of Object.entries(catalogue)) {
    assert.ok(f.label.length > 0 && f.help.length > 0, `${what}.${path}: label and help`);
    assert.ok(!f.help.includes('\n'), `${what}.${path}: help is one line`);
  }
}

test('the field catalogue covers every recipe field of the schema', () => {
  const top = leaves(RecipeSchema, '', ['stages', 'eval.datasets']);
  assert.ok(
    top.has('model.n_layer') &&
      top.has('model.name') &&
      top.has('trainer.lora.rank') &&
      top.has('engine.urls') &&
      top.has('template.toolFormat.middle.head') &&
      top.has('eval.everySteps'),
  );
  assertCovers(RECIPE_FIELDS, top, 'recipe');
  const sft = leaves(SftStageSchema);
  assert.ok(sft.has('data.shares.no_tool') && sft.has('maxSteps'));
  assertCovers(SFT_FIELDS, sft, 'sft stage');
  const rl = leaves(RlStageSchema);
  assert.ok(rl.has('roc.minPerSign') && rl.has('data.limit') && rl.has('dataFilter.k') && rl.has('tool.session'));
  assertCovers(RL_FIELDS, rl, 'rl stage');
  assertCovers(EVAL_SOURCE_FIELDS, leaves(EvalSourceSchema), 'eval dataset');
  // The stages and eval datasets the walk left out are exactly the ones the stage / dataset catalogues describe.
  const all = leaves(RecipeSchema);
  for (const p of all) {
    if (p.startsWith('stages.*.')) assert.ok(p.slice(9) in SFT_FIELDS || p.slice(9) in RL_FIELDS, p);
    else if (p.startsWith('eval.datasets.*.')) assert.ok(p.slice(16) in EVAL_SOURCE_FIELDS, p);
    else assert.ok(p in RECIPE_FIELDS, p);
  }
});

test('the catalogue agrees with a parsed recipe: every leaf of the parsed default has an entry', () => {
  const pattern = (p: string) => {
    const stage = /^stages\.(\d+)\.(.*)$/.exec(p);
    if (stage)
      return { cat: EMBEDDED_ARITH.stages[Number(stage[1])]!.type === 'sft' ? SFT_FIELDS : RL_FIELDS, key: stage[2]! };
    const ds = /^eval\.datasets\.\d+\.(.*)$/.exec(p);
    if (ds) return { cat: EVAL_SOURCE_FIELDS, key: ds[1]! };
    return { cat: RECIPE_FIELDS, key: p };
  };
  const walk = (v: unknown, path: string) => {
    if (v && typeof v === 'object' && !Array.isArray(v))
      for (const [k, x] of Object.entries(v)) walk(x, path ? `${path}.${k}` : k);
    else if (Array.isArray(v) && v.some((x) => x && typeof x === 'object'))
      v.forEach((x, i) => walk(x, `${path}.${i}`));
    else {
      const { cat, key } = pattern(path);
      assert.ok(key in cat, `no catalogue entry for ${path}`);
    }
  };
  walk(EMBEDDED_ARITH, '');
  // Defaults shown as placeholders depend on the model kind where the schema's do.
  assert.equal(defaultText(RL_FIELDS.epsHigh!, 'embedded'), '0.28');
  assert.equal(defaultText(RL_FIELDS.lr!, 'model'), '0.000001');
  assert.equal(defaultText(RL_FIELDS.lr!, 'embedded'), '0.0001');
  assert.equal(defaultText(SFT_FIELDS.batch!, 'model'), '128');
});

test('getPath / setPath: dotted paths, arrays, removal, no mutation', () => {
  const spec: Spec = { name: 'a', stages: [{ type: 'sft', name: 's', epochs: 2 }], model: { kind: 'embedded' } };
  const before = structuredClone(spec);
  assert.equal(getPath(spec, 'stages.0.epochs'), 2);
  assert.equal(getPath(spec, 'stages.3.epochs'), undefined);
  assert.equal(getPath(spec, 'name.x'), undefined);
  assert.deepEqual(getPath(spec, ''), spec);

  const a = setPath(spec, 'stages.0.epochs', 5);
  assert.equal(getPath(a, 'stages.0.epochs'), 5);
  assert.deepEqual(spec, before, 'the input is not mutated');
  assert.equal((a as { model: unknown }).model, spec.model, 'untouched branches are shared');

  const b = setPath(spec, 'stages.0.roc.enabled', false);
  assert.deepEqual(getPath(b, 'stages.0.roc'), { enabled: false }, 'missing objects are created');
  const c = setPath(spec, 'eval.datasets.0.n', 4);
  assert.deepEqual(getPath(c, 'eval'), { datasets: [{ n: 4 }] }, 'a numeric next key creates an array');

  const d = setPath(spec, 'stages.0.epochs', undefined);
  assert.ok(!('epochs' in (getPath(d, 'stages.0') as object)), 'undefined removes the key');
  const e = setPath(spec, 'stages.0', undefined);
  assert.deepEqual(getPath(e, 'stages'), [], 'undefined removes an array element');
  assert.equal(setPath(spec, 'seed', null).seed, null, 'null is a value (the schema\'s "off")');

  const two = setPath(spec, 'stages.1', { type: 'rl', name: 'r' });
  assert.deepEqual(stageNames(movePath(two, 'stages', 1, 0)), ['r', 's']);
  assert.equal(movePath(two, 'stages', 0, -1), two, 'out of range: unchanged');
});

test('JSON view ↔ form: edits through paths survive the JSON text, and parse errors do not produce a spec', () => {
  let spec = structuredClone(EMBEDDED_ARITH_INPUT) as unknown as Spec;
  spec = setPath(spec, 'stages.1.epsHigh', 0.3);
  spec = setPath(spec, 'stages.0.lr', undefined);
  spec = setPath(spec, 'template.toolFormat.middle', { head: 128, tail: 128 });
  spec = setPath(spec, 'stages', [...(spec.stages as Spec[]), newStage('rl', stageNames(spec))]);
  const text = specToJson(spec);
  const back = parseSpecJson(text);
  assert.ok(back.ok);
  assert.deepEqual(back.spec, spec);
  assert.equal(stableJson(back.spec), stableJson(spec));
  assert.equal(getPath(back.spec, 'stages.1.epsHigh'), 0.3);
  assert.equal(getPath(back.spec, 'stages.4.name'), 'rl');
  // Editing the text updates what the form reads.
  const edited = parseSpecJson(text.replace('"seed": 1,', '"seed": 42,'));
  assert.ok(edited.ok && getPath(edited.spec, 'seed') === 42);
  // Invalid JSON / non-objects are errors, not specs.
  const bad = parseSpecJson(text.slice(0, -3));
  assert.ok(!bad.ok && bad.error.length > 0);
  assert.ok(!parseSpecJson('[1, 2]').ok);
  assert.ok(!parseSpecJson('null').ok);
  // A designed spec validates, and the validation errors land on field paths.
  assert.ok(validateRecipe(spec).ok);
  const broken = setPath(spec, 'stages.1.keep', 99);
  const r = validateRecipe(broken);
  assert.ok(!r.ok);
  assert.ok(errorsByPath(r.errors).has('stages.1.keep'));
  assert.equal(stableJson({ b: 1, a: { d: 2, c: 3 } }), stableJson({ a: { c: 3, d: 2 }, b: 1 }));
});

test('timelineOf: steps per stage as the schema counts them, defaults filled by model kind', () => {
  assert.deepEqual(
    timelineOf(EMBEDDED_ARITH_INPUT as unknown as Spec).map((s) => s.steps),
    EMBEDDED_ARITH.stages.map(stageSteps),
  );
  const micro = timelineOf(MICRO_INPUT as unknown as Spec);
  assert.deepEqual(micro, [
    { name: 'sft', type: 'sft', steps: 2 * Math.ceil(60 / 4) },
    { name: 'rl', type: 'rl', steps: 2 },
  ]);
  assert.deepEqual(timelineOf({ stages: [{ type: 'rl', name: 'x' }] }), [{ name: 'x', type: 'rl', steps: 16 }]);
  assert.deepEqual(timelineOf({ model: { kind: 'model' }, stages: [{ type: 'rl', name: 'x' }] }), [
    { name: 'x', type: 'rl', steps: 300 },
  ]);
  assert.deepEqual(timelineOf({ stages: 'nope' }), []);
  assert.deepEqual(timelineOf({ stages: [{ type: 'sft', name: 's', data: { n: 100 }, maxSteps: 5 }] })[0]!.steps, 5);
});
