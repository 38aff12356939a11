import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { verifyManifest, verifyStatManifest, writeManifest, writeStatManifest } from '../../scripts/build-cache.mjs';

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
