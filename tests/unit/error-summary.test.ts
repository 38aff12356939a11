import { test } from 'node:test';
import assert from 'node:assert/strict';
import { summaryLine } from '../../server/errors.ts';

test("a fatal error's line for a person: the first and last non-blank lines of the message, never empty", () => {
  assert.equal(summaryLine('disk full'), 'disk full');
  assert.equal(
    summaryLine('\nInvalid `prisma.problem.create()` invocation:\n\n\n  Operation timed out: database is locked\n'),
    'Invalid `prisma.problem.create()` invocation: … Operation timed out: database is locked',
  );
  assert.equal(summaryLine(''), '(no message)');
  assert.equal(summaryLine('\n  \n'), '(no message)');
});
