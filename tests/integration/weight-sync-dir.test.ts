// @no-database: runs once, not once per database.
// A run's weight versions go only into its own weight-sync folder: <root>/<run id>, and
// engine.weightSync.dir names a subfolder of it, never another run's folder or a path; a link planted on the way
// (the run's folder or the subfolder leading elsewhere, or dangling) is refused with an error naming the field.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runWeightSyncDir } from '../../workers/policy/weight-export.ts';
import { PermanentJobError } from '../../workers/types.ts';

let root = '';
let tmp = '';
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ws-dir-'));
  root = path.join(tmp, 'weight-sync');
});
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const refused = (re: RegExp) => (e: unknown) =>
  e instanceof PermanentJobError && /^engine\.weightSync\.dir: /.test(e.message) && re.test(e.message);

test("the run's own folder, and dir as a subfolder of it: another run's id lands inside the own folder", () => {
  assert.equal(runWeightSyncDir(root, 'run_a'), path.join(root, 'run_a')); // no root yet
  fs.mkdirSync(path.join(root, 'run_b'), { recursive: true });
  assert.equal(runWeightSyncDir(root, 'run_a'), path.join(root, 'run_a'));
  assert.equal(runWeightSyncDir(root, 'run_a', 'qwen-sync'), path.join(root, 'run_a', 'qwen-sync'));
  assert.equal(runWeightSyncDir(root, 'run_a', 'run_b'), path.join(root, 'run_a', 'run_b'), "not run_b's folder");
  fs.mkdirSync(path.join(root, 'run_a', 'qwen-sync'), { recursive: true });
  assert.equal(runWeightSyncDir(root, 'run_a', 'qwen-sync'), path.join(root, 'run_a', 'qwen-sync'));
});

test('a dir that is a path is refused naming the field', () => {
  for (const d of ['../run_b', 'a/b', '/etc', '..', '.hidden', '']) {
    assert.throws(() => runWeightSyncDir(root, 'run_a', d), refused(/is not a folder name: .*never a path/), d);
  }
});

test("links planted on the way are refused: the run's folder, the subfolder, a dangling one", () => {
  fs.mkdirSync(path.join(root, 'run_b', 'sync'), { recursive: true });
  fs.symlinkSync(path.join(root, 'run_b'), path.join(root, 'run_c'));
  assert.throws(
    () => runWeightSyncDir(root, 'run_c'),
    refused(/run_c is a link; refused \(a run writes weight versions only inside its own weight-sync folder/),
  );
  assert.throws(() => runWeightSyncDir(root, 'run_c', 'sync'), refused(/is a link/));
  fs.mkdirSync(path.join(root, 'run_d'));
  fs.symlinkSync(path.join(root, 'run_b', 'sync'), path.join(root, 'run_d', 'sync'));
  assert.throws(() => runWeightSyncDir(root, 'run_d', 'sync'), refused(/run_d\/sync is a link/));
  fs.symlinkSync(path.join(tmp, 'nowhere'), path.join(root, 'run_d', 'gone'));
  assert.throws(() => runWeightSyncDir(root, 'run_d', 'gone'), refused(/is a link/));
  fs.symlinkSync('/etc', path.join(root, 'run_d', 'etc'));
  assert.throws(() => runWeightSyncDir(root, 'run_d', 'etc'), refused(/is a link/));
  // The root itself may be a link (an operator's mount): what is under it is still checked.
  fs.symlinkSync(root, path.join(tmp, 'root-link'));
  assert.equal(
    runWeightSyncDir(path.join(tmp, 'root-link'), 'run_b', 'sync'),
    path.join(tmp, 'root-link', 'run_b', 'sync'),
  );
  assert.throws(() => runWeightSyncDir(path.join(tmp, 'root-link'), 'run_c'), refused(/is a link/));
});
