import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { verifyManifest, writeManifest } from '../../scripts/build-cache.mjs';

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
