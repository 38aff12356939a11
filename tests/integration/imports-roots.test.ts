/**
 * The Import run action's folder check (runs.importFolder) answers every path outside the
 * import roots with one and the same message, whether it is a folder, a file, a link out of a root, nothing, or
 * under nothing (distinct answers told any researcher which server paths exist and which are folders); inside the
 * roots the answers say what is wrong.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import type { Database } from '../../server/db/client.ts';
import { createCallerFactory } from '../../server/trpc/init.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { freshDatabase } from '../helpers/db.ts';
import { principal } from '../helpers/principals.ts';

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let dir: string;
let previous: string | undefined;

beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-import-roots-'));
  previous = process.env.TOOLSMITH_IMPORT_ROOTS;
});
afterEach(async () => {
  if (previous === undefined) delete process.env.TOOLSMITH_IMPORT_ROOTS;
  else process.env.TOOLSMITH_IMPORT_ROOTS = previous;
  await fresh.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** The message the check answers, with the path asked about replaced by one placeholder. */
async function answer(p: string): Promise<string> {
  const call = createCallerFactory(appRouter)({ db, principal: principal('researcher') });
  try {
    await call.runs.importFolder({ path: p });
  } catch (e) {
    return (e as Error).message.replace(p, 'PATH');
  }
  throw new Error(`${p} was accepted`);
}

test('every path outside the import roots gets the same answer; inside, the answer says what is wrong', async () => {
  const root = path.join(dir, 'root');
  const outside = path.join(dir, 'outside');
  fs.mkdirSync(path.join(root, 'run'), { recursive: true });
  fs.writeFileSync(path.join(root, 'run', 'notes.txt'), 'x');
  fs.mkdirSync(path.join(outside, 'folder'), { recursive: true });
  fs.writeFileSync(path.join(outside, 'file.txt'), 'secret');
  execFileSync('mkfifo', [path.join(outside, 'fifo')]);
  fs.symlinkSync(outside, path.join(root, 'link-out'));
  fs.symlinkSync(path.join(outside, 'file.txt'), path.join(root, 'file-link-out'));
  fs.symlinkSync(path.join(dir, 'nothing'), path.join(root, 'dangling-out'));
  fs.symlinkSync(path.join(root, 'gone'), path.join(root, 'dangling-in'));
  process.env.TOOLSMITH_IMPORT_ROOTS = root;

  const paths = [
    path.join(outside, 'folder'),
    path.join(outside, 'file.txt'),
    path.join(outside, 'fifo'),
    path.join(outside, 'nothing'),
    path.join(outside, 'nothing', 'deeper'),
    path.join(outside, 'file.txt', 'under-a-file'),
    path.join(root, '..', 'outside', 'folder'),
    path.join(root, 'link-out', 'folder'),
    path.join(root, 'link-out', 'nothing'),
    path.join(root, 'file-link-out'),
    path.join(root, 'dangling-out'),
    '/',
    '/proc/self/environ',
    '/no/such/path/anywhere',
  ];
  const answers = await Promise.all(paths.map(answer));
  assert.equal(
    new Set(answers).size,
    1,
    `one answer for all:\n${JSON.stringify(
      paths.map((p, i) => [p, answers[i]]),
      null,
      1,
    )}`,
  );
  assert.match(answers[0]!, /^PATH is not inside an import root \(TOOLSMITH_IMPORT_ROOTS: .*\), after symlinks$/);

  assert.match(await answer(path.join(root, 'nothing')), /^no folder at PATH$/);
  assert.match(await answer(path.join(root, 'dangling-in')), /^no folder at PATH$/);
  assert.match(await answer(path.join(root, 'run', 'notes.txt')), /^PATH is not a folder$/);
  // A folder inside a root is not walked on the request: the import job says what it lacks (imports-walk.test.ts).
  const call = createCallerFactory(appRouter)({ db, principal: principal('researcher') });
  assert.equal((await call.runs.importFolder({ path: path.join(root, 'run') })).format, null);
});
