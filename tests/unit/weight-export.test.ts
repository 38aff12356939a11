import { test } from 'node:test';
import assert from 'node:assert/strict';
import { foldersToPrune, nextVersionNumber, versionDirName, versionDirs } from '../../workers/policy/weight-export.ts';
import { adapterName, parseVersion } from '../../workers/engines/weight-sync.ts';

test('version folders: numbered after the highest there, other names ignored, the newest two kept', () => {
  assert.equal(versionDirName(7), 'v000007');
  assert.equal(nextVersionNumber([]), 1);
  const names = ['v000010', 'current', 'v000002', 'v000003.tmp-ab12', 'v000009', 'notes', 'v1'];
  assert.deepEqual(
    versionDirs(names).map((d) => d.n),
    [2, 9, 10],
  );
  assert.equal(nextVersionNumber(names), 11);
  assert.deepEqual(foldersToPrune(names), ['v000002']);
  assert.deepEqual(foldersToPrune(['v000001']), []);
  assert.deepEqual(foldersToPrune(['v000001', 'v000002', 'v000003', 'v000004'], 2), ['v000001', 'v000002']);
});

test('weight_version labels: integers or digit strings are ours, anything else is not', () => {
  assert.equal(parseVersion('12'), 12);
  assert.equal(parseVersion(3), 3);
  for (const x of ['default', '', '1.5', -1, 1.5, null, undefined, 'v2'])
    assert.equal(parseVersion(x), null, String(x));
  assert.equal(adapterName('qwen', 4), 'qwen-v4');
});
