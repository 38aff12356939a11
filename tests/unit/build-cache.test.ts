import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  cacheEntry,
  lockEntry,
  verifyManifest,
  verifyStatManifest,
  writeManifest,
  writeStatManifest,
} from '../../scripts/build-cache.mjs';

/** The build cache's entries are used only when every file matches its recorded hash (scripts/build-cache.mjs). */
test('a cache entry is trusted only with its manifest, and only while its files are exactly the recorded ones', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-cache-'));
  try {
    fs.mkdirSync(path.join(dir, 'export'));
    fs.writeFileSync(path.join(dir, 'config.json'), '{}');
    fs.writeFileSync(path.join(dir, 'export/model.onnx'), Buffer.alloc(1000, 7));
    assert.equal(verifyManifest(dir), false, 'never completed: no manifest');
    writeManifest(dir);
    assert.equal(verifyManifest(dir), true);

    fs.writeFileSync(path.join(dir, 'export/model.onnx'), Buffer.alloc(1000, 8));
    assert.equal(verifyManifest(dir), false, 'a file altered (same size)');
    writeManifest(dir);
    fs.writeFileSync(path.join(dir, 'export/extra.bin'), 'x');
    assert.equal(verifyManifest(dir), false, 'a file added');
    fs.rmSync(path.join(dir, 'export/extra.bin'));
    assert.equal(verifyManifest(dir), true);
    fs.rmSync(path.join(dir, 'config.json'));
    assert.equal(verifyManifest(dir), false, 'a file missing');
    fs.writeFileSync(path.join(dir, '.sha256.json'), 'not json');
    assert.equal(verifyManifest(dir), false, 'a manifest that does not parse');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** node_modules is too large to hash on every use: its entry records each file's size and time, and a clone takes it
 *  as hard links, so a file changed in place from the clone's side must fail the entry's check. */
test('a stat-checked entry fails once one of its files is changed through a hard link, added or removed', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-cache-'));
  try {
    const entry = path.join(dir, 'entry');
    fs.mkdirSync(path.join(entry, 'node_modules/pkg'), { recursive: true });
    const file = path.join(entry, 'node_modules/pkg/index.js');
    fs.writeFileSync(file, 'module.exports = 1;');
    assert.equal(verifyStatManifest(entry), false, 'never completed: no manifest');
    writeStatManifest(entry);
    assert.equal(verifyStatManifest(entry), true);

    const linked = path.join(dir, 'clone-index.js');
    fs.linkSync(file, linked);
    fs.writeFileSync(linked, 'module.exports = 2;'); // same size, in place, from the clone's side
    // The kernel's file clock ticks every few ms: a later edit, as any real one is, gets a later time.
    fs.utimesSync(linked, new Date(), new Date(Date.now() + 5000));
    assert.equal(verifyStatManifest(entry), false, 'a file changed through a hard link');
    writeStatManifest(entry);
    fs.writeFileSync(path.join(entry, 'node_modules/pkg/extra.js'), '');
    assert.equal(verifyStatManifest(entry), false, 'a file added');
    fs.rmSync(path.join(entry, 'node_modules/pkg/extra.js'));
    assert.equal(verifyStatManifest(entry), true);
    fs.rmSync(file);
    assert.equal(verifyStatManifest(entry), false, 'a file missing');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** Every entry (npm, the web build, the trainer's environment, the SFT fixture) is made through cacheEntry: begun,
 *  filled, sealed last, so that one cut off half-way is never taken. */
test('an entry is ready only once sealed, for its own inputs, whatever its check', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'build-cache-'));
  const was = process.env.TOOLSMITH_BUILD_CACHE;
  process.env.TOOLSMITH_BUILD_CACHE = root;
  try {
    for (const check of ['sha256', 'stat', 'complete'] as const) {
      const entry = cacheEntry(`probe-${check}`, 'inputs-1', check);
      assert.ok(entry);
      assert.ok(entry.dir.startsWith(root), 'under the cache root');
      assert.equal(entry.ready(), false, `${check}: nothing there yet`);
      entry.begin();
      fs.writeFileSync(path.join(entry.dir, 'half'), 'x');
      assert.equal(entry.ready(), false, `${check}: begun, not sealed`);
      entry.seal();
      assert.equal(entry.ready(), true, `${check}: sealed`);
      entry.begin();
      assert.deepEqual(fs.readdirSync(entry.dir), [], `${check}: begin empties the entry`);
      assert.equal(entry.ready(), false, `${check}: begun again`);
      assert.notEqual(cacheEntry(`probe-${check}`, 'inputs-2', check)?.dir, entry.dir, 'other inputs, other folder');
    }
    const complete = cacheEntry('probe-complete', 'inputs-1', 'complete');
    assert.ok(complete);
    complete.seal();
    fs.writeFileSync(path.join(complete.dir, 'written in use'), 'x');
    assert.equal(complete.ready(), true, 'a completed entry may change its files in use');

    const saved = cacheEntry('probe-save', 'k');
    assert.ok(saved);
    saved.save((dir) => fs.writeFileSync(path.join(dir, 'a'), 'a'));
    assert.equal(saved.ready(), true);
    const warnings: string[] = [];
    saved.save(
      (dir) => {
        fs.writeFileSync(path.join(dir, 'b'), 'b');
        throw new Error('disk full');
      },
      (w) => warnings.push(w),
    );
    assert.equal(saved.ready(), false, 'a save that failed half-way leaves no entry');
    assert.equal(fs.existsSync(saved.dir), false);
    assert.match(warnings[0] ?? '', /could not be written \(disk full\)/);
  } finally {
    if (was === undefined) delete process.env.TOOLSMITH_BUILD_CACHE;
    else process.env.TOOLSMITH_BUILD_CACHE = was;
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test("an entry's lock is held by one builder at a time, and a dead builder's lock is taken over", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'build-cache-'));
  const was = process.env.TOOLSMITH_BUILD_CACHE;
  process.env.TOOLSMITH_BUILD_CACHE = root;
  try {
    const entry = cacheEntry('probe-lock', 'k');
    assert.ok(entry);
    const release = await lockEntry(entry, 60_000);
    await assert.rejects(lockEntry(entry, 0), /timed out waiting for/, 'held: a second builder waits');
    release();
    (await lockEntry(entry, 0))();
    // A builder that died holding it: a pid no process has.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
      encoding: 'utf8',
    }).stdout;
    fs.mkdirSync(`${entry.dir}.lock`);
    fs.writeFileSync(`${entry.dir}.lock/pid`, dead);
    (await lockEntry(entry, 0))();
  } finally {
    if (was === undefined) delete process.env.TOOLSMITH_BUILD_CACHE;
    else process.env.TOOLSMITH_BUILD_CACHE = was;
    fs.rmSync(root, { recursive: true, force: true });
  }
});
