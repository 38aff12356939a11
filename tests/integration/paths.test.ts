// Models and files by name, never by path: a recipe that names a checkpoint path (to a crafted
// pickle) or a tokenizer file is refused at validate/save/launch before any worker could run it, with an error
// that names the field and says the same whether the path exists or not; names with "../" or absolute paths are
// refused before the filesystem is touched; a symlink planted inside the models folder that leads outside is refused.
import { after, afterEach, before, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { TRPCError } from '@trpc/server';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { principal } from '../helpers/principals.ts';
import { PathEscapeError, resolveUnderRoot } from '../../server/models/under-root.ts';
import { listModels, modelPath, resolveModel } from '../../server/models/registry.ts';
import { EMBEDDED_ARITH_INPUT } from '../../server/recipes/defaults.ts';

let tmp: string;
let models: string;
let outside: string;
const SECRET = 'TOP-SECRET-CONTENT-4711';
const savedModels = process.env.TOOLSMITH_MODELS_DIR;

before(() => {
  tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-paths-')));
  models = path.join(tmp, 'models');
  outside = path.join(tmp, 'outside');
  fs.mkdirSync(models);
  fs.mkdirSync(outside);
  // What a stolen model folder outside the root would look like, secret included.
  fs.writeFileSync(path.join(outside, 'config.json'), JSON.stringify({ model_type: 'qwen3', secret: SECRET }));
  fs.writeFileSync(path.join(outside, 'secret.txt'), SECRET, { mode: 0o600 });
  process.env.TOOLSMITH_MODELS_DIR = models;
});
after(() => {
  if (savedModels === undefined) delete process.env.TOOLSMITH_MODELS_DIR;
  else process.env.TOOLSMITH_MODELS_DIR = savedModels;
  fs.rmSync(tmp, { recursive: true, force: true });
});

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  await fresh.close();
});

const opts = { field: 'model.name', rootLabel: 'the models folder' };
const noSecret = (e: unknown) => {
  assert.ok(!(e as Error).message.includes(SECRET), (e as Error).message);
  return true;
};

test('names with "../", "/" or an absolute path are refused naming the field; nothing outside is read', () => {
  for (const name of ['../outside', '..', `${outside}`, 'a/b', '/etc/passwd', '.hidden', '']) {
    assert.throws(
      () => resolveUnderRoot(models, name, opts),
      (e: unknown) => {
        assert.ok(e instanceof PathEscapeError);
        assert.match((e as Error).message, /^model\.name: .* is not a name: .*never a path/);
        return noSecret(e);
      },
      name,
    );
  }
});

test('a symlink inside the root that leads outside is refused; one that stays inside is followed', () => {
  fs.symlinkSync(outside, path.join(models, 'evil'));
  fs.symlinkSync(path.join(outside, 'nowhere'), path.join(models, 'dangling'));
  fs.mkdirSync(path.join(models, 'real'));
  fs.writeFileSync(path.join(models, 'real', 'config.json'), '{}');
  fs.symlinkSync(path.join(models, 'real'), path.join(models, 'alias'));
  fs.mkdirSync(path.join(models, 'leaky'));
  fs.writeFileSync(path.join(models, 'leaky', 'config.json'), '{}');
  fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(models, 'leaky', 'tokenizer.json'));
  try {
    for (const name of ['evil', 'dangling']) {
      assert.throws(
        () => resolveUnderRoot(models, name, opts),
        (e: unknown) => {
          assert.ok(e instanceof PathEscapeError);
          assert.match(
            (e as Error).message,
            new RegExp(`^model\\.name: "${name}" is a link that leads outside the models folder; refused`),
          );
          assert.ok(!(e as Error).message.includes(outside), 'the error says where the link leads');
          return noSecret(e);
        },
      );
    }
    assert.equal(resolveUnderRoot(models, 'alias', opts), path.join(models, 'real'));
    assert.equal(resolveUnderRoot(models, 'leaky', opts), path.join(models, 'leaky'));
    assert.throws(
      () => resolveUnderRoot(models, 'leaky', { ...opts, checkEntries: true }),
      /"leaky\/tokenizer\.json" is a link that leads outside/,
    );
    assert.equal(resolveUnderRoot(models, 'not-there', opts), path.join(models, 'not-there'));

    // The registry: the escaping models are neither resolved nor listed (their config.json is never read).
    for (const name of ['evil', 'leaky']) {
      assert.throws(
        () => modelPath(name),
        (e: unknown) => e instanceof PathEscapeError && noSecret(e),
      );
      assert.throws(
        () => resolveModel(name),
        (e: unknown) => e instanceof PathEscapeError && noSecret(e),
      );
    }
  } finally {
    for (const n of ['evil', 'dangling', 'alias']) fs.rmSync(path.join(models, n), { force: true });
    for (const n of ['real', 'leaky']) fs.rmSync(path.join(models, n), { recursive: true, force: true });
  }
});

test('models.list skips a planted link out of the models folder and never shows its contents', async () => {
  fs.symlinkSync(outside, path.join(models, 'evil'));
  try {
    const list = await listModels();
    assert.deepEqual(
      list.map((m) => m.name),
      [],
    );
    const api = await createCallerFactory(appRouter)({ db, principal: principal('viewer') }).models.list();
    assert.ok(!JSON.stringify(api).includes(SECRET));
  } finally {
    fs.rmSync(path.join(models, 'evil'), { force: true });
  }
});

test('the pickle path: a recipe naming a checkpoint or a tokenizer file is refused at validate, save and launch; no run, no job, no marker', async () => {
  const marker = path.join(tmp, 'unpickled-marker');
  // A pickle whose loading would create the marker (as the demonstration did); never loaded.
  const evil = path.join(tmp, 'evil.pt');
  fs.writeFileSync(evil, `cos\nsystem\n(S'touch ${marker}'\ntR.`);
  const caller = createCallerFactory(appRouter)({ db, principal: principal('researcher') });
  const cases = [
    {
      field: 'model.kind',
      spec: { ...EMBEDDED_ARITH_INPUT, name: 'attack-model', model: { kind: 'checkpoint', path: evil } },
    },
    {
      field: 'model.kind',
      spec: {
        ...EMBEDDED_ARITH_INPUT,
        name: 'attack-model-missing',
        model: { kind: 'checkpoint', path: path.join(tmp, 'no-such.pt') },
      },
    },
    {
      field: 'tokenizer.kind',
      spec: {
        ...EMBEDDED_ARITH_INPUT,
        name: 'attack-tok',
        tokenizer: { kind: 'file', path: path.join(outside, 'secret.txt') },
      },
    },
    {
      field: 'tokenizer.kind',
      spec: {
        ...EMBEDDED_ARITH_INPUT,
        name: 'attack-tok-missing',
        tokenizer: { kind: 'file', path: path.join(outside, 'no-such.json') },
      },
    },
    {
      field: 'model.name',
      spec: { ...EMBEDDED_ARITH_INPUT, name: 'attack-name', model: { kind: 'model', name: '../outside' } },
    },
    {
      field: 'model.name',
      spec: { ...EMBEDDED_ARITH_INPUT, name: 'attack-abs', model: { kind: 'model', name: outside } },
    },
  ];
  const messages: Record<string, string[]> = {};
  for (const c of cases) {
    const v = await caller.recipes.validate({ spec: c.spec });
    assert.equal(v.ok, false);
    assert.ok(!v.ok && v.errors.some((e) => e.path === c.field), JSON.stringify(v));
    for (const call of [() => caller.recipes.save({ spec: c.spec }), () => caller.recipes.launch({ spec: c.spec })]) {
      await assert.rejects(call(), (e: unknown) => {
        assert.ok(e instanceof TRPCError);
        assert.equal(e.code, 'BAD_REQUEST');
        assert.ok(e.message.includes(`${c.field}: `), e.message);
        for (const bad of [SECRET, evil, outside])
          assert.ok(
            !e.message.includes(bad) || (c.field === 'model.name' && bad === outside),
            `the error quotes ${bad}: ${e.message}`,
          );
        (messages[c.field] ??= []).push(e.message.replace(/attack-[a-z-]+/g, 'NAME'));
        return true;
      });
    }
  }
  // Whether the path exists changes nothing in the answer.
  for (const f of ['model.kind', 'tokenizer.kind'])
    assert.equal(new Set(messages[f]).size, 1, JSON.stringify(messages[f]));
  assert.equal(await db.prisma.run.count(), 0);
  assert.equal(await db.prisma.job.count(), 0);
  assert.equal(await db.prisma.recipe.count({ where: { name: { startsWith: 'attack-' } } }), 0);
  assert.equal(fs.existsSync(marker), false, 'the pickle ran');
});
