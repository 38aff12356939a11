import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commands } from '../../cli/commands.ts';

// cli/commands.ts names each command and loads its module on demand; a name that disagrees with the module's
// command would run one command under another's name, and help would list it wrong.
test('every listed command loads the command of that name, once, with a summary', async () => {
  const names = commands.map((c) => c.name);
  assert.equal(new Set(names).size, names.length, `duplicate names: ${names}`);
  for (const entry of commands) {
    const cmd = await entry.load();
    assert.equal(cmd.name, entry.name);
    assert.ok(cmd.summary.length > 10, `${entry.name} has no summary`);
    assert.equal(typeof cmd.run, 'function');
  }
});
