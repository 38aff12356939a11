/**
 * Import readers are bounded and contained, on real folders in a temp dir: the opener refuses
 * a symlink out of the run's folder (also one swapped in after the listing), a FIFO without blocking, a device behind
 * a link and a file over its cap; a line over the cap is skipped by number and never held whole (10 MB without a
 * newline included); many short lines come in bounded chunks; the walk does not follow symlinked folders (a 40-level
 * tree of links ends), stops at its depth and refuses past its entry count; and the pure depth and size checks.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { IMPORT_LIMITS, jsonDepthOver, recordExcess } from '../../server/imports/bounds.ts';
import { listFiles } from '../../server/imports/folder.ts';
import { openContained, RefusedFile } from '../../server/imports/open.ts';
import { readLines } from '../../workers/imports/files.ts';

let dir: string;
let run: string;
let outside: string;

beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-bounds-'));
  run = path.join(dir, 'run');
  outside = path.join(dir, 'secret.txt');
  fs.mkdirSync(path.join(run, 'rollout'), { recursive: true });
  fs.writeFileSync(outside, '{"score": 42}\n');
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The refusal `fn` throws: a RefusedFile naming `file`, its reason matching `reason`. */
function refused(fn: () => unknown, file: string, reason: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof RefusedFile, String(e));
    assert.equal(e.file, file);
    assert.match(e.reason, reason);
    assert.equal(e.missing, false);
    return true;
  });
}

const lineLimits = { fileBytes: IMPORT_LIMITS.fileBytes, lineBytes: 1024, linesPerChunk: 100 };

test('a symlink to a file outside the run folder is not listed and not opened', () => {
  fs.symlinkSync(outside, path.join(run, 'rollout', '1.jsonl'));
  const listed = listFiles(run);
  assert.deepEqual(listed.files, []);
  assert.deepEqual(listed.outside, ['rollout/1.jsonl']);
  refused(() => openContained(run, 'rollout/1.jsonl', 1024), 'rollout/1.jsonl', /outside the run folder/);
  refused(() => readLines(run, 'rollout/1.jsonl', { offset: 0, line: 0 }, lineLimits), 'rollout/1.jsonl', /outside/);
});

test('a listed file swapped for a symlink out of the folder before it is opened is refused', () => {
  const file = path.join(run, 'rollout', '1.jsonl');
  fs.writeFileSync(file, '{"score": 1}\n');
  assert.deepEqual(listFiles(run).files, ['rollout/1.jsonl']);
  // The writer swaps it after the listing: the reader opens by the listed name.
  fs.rmSync(file);
  fs.symlinkSync(outside, file);
  refused(() => readLines(run, 'rollout/1.jsonl', { offset: 0, line: 0 }, lineLimits), 'rollout/1.jsonl', /outside/);
  // A symlinked parent folder is caught the same way.
  fs.rmSync(path.join(run, 'rollout'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'elsewhere'));
  fs.writeFileSync(path.join(dir, 'elsewhere', '1.jsonl'), '{"score": 1}\n');
  fs.symlinkSync(path.join(dir, 'elsewhere'), path.join(run, 'rollout'));
  refused(() => openContained(run, 'rollout/1.jsonl', 1024), 'rollout/1.jsonl', /outside/);
  // A path that climbs out by name is refused before anything is resolved.
  refused(() => openContained(run, '../secret.txt', 1024), '../secret.txt', /not a path inside/);
});

test('a symlink inside the folder to a file inside it opens; a missing file is missing, not refused', () => {
  fs.writeFileSync(path.join(run, 'rollout', 'real.jsonl'), '{"a": 1}\n');
  fs.symlinkSync('real.jsonl', path.join(run, 'rollout', '2.jsonl'));
  const chunk = readLines(run, 'rollout/2.jsonl', { offset: 0, line: 0 }, lineLimits);
  assert.deepEqual(chunk?.lines, [{ text: '{"a": 1}', line: 1 }]);
  assert.equal(readLines(run, 'rollout/3.jsonl', { offset: 0, line: 0 }, lineLimits), null);
});

test('a FIFO is refused by name at once, whether named directly or through a link; nothing blocks', {
  timeout: 60_000,
}, () => {
  const fifo = path.join(run, 'rollout', '1.jsonl');
  execFileSync('mkfifo', [fifo]);
  assert.deepEqual(listFiles(run).files, [], 'not listed: not a regular file');
  refused(() => openContained(run, 'rollout/1.jsonl', 1024), 'rollout/1.jsonl', /a FIFO, not a regular file/);
  fs.symlinkSync('1.jsonl', path.join(run, 'rollout', '2.jsonl'));
  refused(() => readLines(run, 'rollout/2.jsonl', { offset: 0, line: 0 }, lineLimits), 'rollout/2.jsonl', /a FIFO/);
});

test('/dev/zero behind a link is refused, and a device named inside its folder is refused by kind', () => {
  fs.symlinkSync('/dev/zero', path.join(run, 'rollout', '1.jsonl'));
  refused(() => readLines(run, 'rollout/1.jsonl', { offset: 0, line: 0 }, lineLimits), 'rollout/1.jsonl', /outside/);
  refused(() => openContained('/dev', 'zero', 1024), 'zero', /a device, not a regular file/);
});

test('a file over its cap is refused with its size', () => {
  fs.writeFileSync(path.join(run, 'rollout', '1.jsonl'), 'x'.repeat(2000));
  refused(() => openContained(run, 'rollout/1.jsonl', 1000), 'rollout/1.jsonl', /larger than 1000 bytes \(2000\)/);
});

test('one 10 MB line without a newline is never held whole: reported as over the cap, nothing passed', () => {
  const file = path.join(run, 'rollout', '1.jsonl');
  fs.writeFileSync(file, Buffer.alloc(10 * 1024 * 1024, 0x61));
  const limits = { ...lineLimits, lineBytes: IMPORT_LIMITS.lineBytes };
  assert.ok(IMPORT_LIMITS.lineBytes < 10 * 1024 * 1024);
  const chunk = readLines(run, 'rollout/1.jsonl', { offset: 0, line: 0 }, limits);
  assert.deepEqual(chunk, { lines: [], overlong: [], tailOverlong: 1, offset: 0, line: 0 });
  // Once its newline comes, the line is skipped by number and the next one is read.
  fs.appendFileSync(file, '\n{"ok": true}\n');
  const next = readLines(run, 'rollout/1.jsonl', { offset: 0, line: 0 }, limits);
  assert.deepEqual(next?.overlong, [1]);
  assert.deepEqual(next?.lines, [{ text: '{"ok": true}', line: 2 }]);
  assert.equal(next?.offset, fs.statSync(file).size);
});

test('a 512 MiB file without a newline is scanned in bounded memory (peak RSS grows by far less than the file)', () => {
  const file = path.join(run, 'rollout', '1.jsonl');
  // Sparse: no disk is written, but every byte is read (zeros, no newline).
  fs.closeSync(fs.openSync(file, 'w'));
  fs.truncateSync(file, 512 * 1024 * 1024);
  const before = process.resourceUsage().maxRSS;
  const chunk = readLines(
    run,
    'rollout/1.jsonl',
    { offset: 0, line: 0 },
    { ...lineLimits, lineBytes: IMPORT_LIMITS.lineBytes },
  );
  const grownMiB = (process.resourceUsage().maxRSS - before) / 1024;
  assert.equal(chunk?.tailOverlong, 1);
  assert.ok(grownMiB < 128, `peak RSS grew by ${grownMiB.toFixed(0)} MiB`);
});

test('a line over the cap among short ones is skipped by number; the ones around it are read', () => {
  const text = `{"a": 1}\n${'y'.repeat(3000)}\n{"a": 3}\n${'z'.repeat(1024)}\n`;
  fs.writeFileSync(path.join(run, 'rollout', '1.jsonl'), text);
  const chunk = readLines(run, 'rollout/1.jsonl', { offset: 0, line: 0 }, lineLimits);
  assert.deepEqual(chunk?.overlong, [2]);
  assert.deepEqual(
    chunk?.lines.map((l) => [l.line, l.text.length]),
    [
      [1, 8],
      [3, 8],
      [4, 1024],
    ],
    'a line of exactly the cap is read',
  );
  assert.equal(chunk?.offset, Buffer.byteLength(text));
});

test('many short bad lines come in chunks of at most linesPerChunk, resumed from the offset without loss', () => {
  fs.writeFileSync(path.join(run, 'rollout', '1.jsonl'), 'x\n'.repeat(1050));
  let at = { offset: 0, line: 0 };
  const sizes: number[] = [];
  for (;;) {
    const chunk = readLines(run, 'rollout/1.jsonl', at, lineLimits);
    if (!chunk || chunk.offset === at.offset) break;
    sizes.push(chunk.lines.length);
    assert.equal(chunk.lines[0]?.line, at.line + 1);
    at = { offset: chunk.offset, line: chunk.line };
  }
  assert.deepEqual(sizes, [100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 50]);
  assert.equal(at.line, 1050);
});

test('the walk does not follow symlinked folders: a 40-level tree of links ends, each file listed once', () => {
  let level = run;
  for (let i = 0; i < 40; i++) {
    fs.writeFileSync(path.join(level, `${i}.jsonl`), '{}\n');
    // Two links a level, each back up to the top: followed, this tree has 2^40 paths (and loops).
    fs.symlinkSync(run, path.join(level, 'up'));
    fs.symlinkSync(level, path.join(level, 'here'));
    const next = path.join(level, `d${i}`);
    fs.mkdirSync(next);
    level = next;
  }
  const listed = listFiles(run, { walkDepth: 64, walkEntries: 10_000 });
  assert.equal(listed.files.length, 40);
  assert.ok(listed.files.includes('d0/d1/2.jsonl'));
  assert.match(listed.skipped.join('\n'), /(up|here) \(a symlinked folder; not followed\)/);
});

test('the walk stops at its depth (naming what it left) and refuses a folder past its entry count', () => {
  let level = run;
  for (let i = 0; i < 5; i++) {
    level = path.join(level, `d${i}`);
    fs.mkdirSync(level);
    fs.writeFileSync(path.join(level, '1.jsonl'), '{}\n');
  }
  const listed = listFiles(run, { walkDepth: 3, walkEntries: 1000 });
  assert.deepEqual(listed.files.sort(), ['d0/1.jsonl', 'd0/d1/1.jsonl', 'd0/d1/d2/1.jsonl']);
  assert.deepEqual(listed.skipped, ['d0/d1/d2/d3/ (deeper than 3 folders)']);
  for (let i = 0; i < 30; i++) fs.writeFileSync(path.join(run, 'rollout', `${i}.jsonl`), '{}\n');
  assert.throws(() => listFiles(run, { walkDepth: 3, walkEntries: 20 }), /more than 20 entries under/);
});

test('JSON depth: counted outside strings, escaped quotes included; a deep text is caught before it is parsed', () => {
  assert.equal(jsonDepthOver('{"a": [1, {"b": 2}]}', 3), false);
  assert.equal(jsonDepthOver('{"a": [1, {"b": [2]}]}', 3), true);
  assert.equal(jsonDepthOver('{"a": "[[[[[[\\"[[[["}', 1), false, 'brackets in strings do not count');
  assert.equal(jsonDepthOver(`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 64), true);
});

test('a decoded record over the size or depth cap is named with why; one within both passes', () => {
  const limits = { depth: 4, recordBytes: 1000 };
  assert.equal(recordExcess({ a: 'x'.repeat(100), b: [1, 2, { c: null }] }, limits), null);
  assert.equal(recordExcess({ a: 'x'.repeat(2000) }, limits), 'larger than 1000 bytes as JSON');
  assert.equal(recordExcess({ a: [[[[[1]]]]] }, limits), 'nested deeper than 4 levels');
  assert.equal(recordExcess({ a: new Uint8Array(600) }, limits), 'larger than 1000 bytes as JSON');
});
