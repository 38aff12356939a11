import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseFlags } from '../../cli/args.ts';
import { UserError } from '../../contracts/errors.ts';

const SPEC = { kinds: 'string', steps: 'number', queue: 'boolean' } as const;

function userError(fn: () => unknown, re: RegExp) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof UserError, `expected a UserError, got ${String(e)}`);
    assert.match((e as Error).message, re);
    return true;
  });
}

test('parseFlags: no arguments give an empty object', () => {
  assert.deepEqual(parseFlags([], SPEC), {});
});

test('parseFlags: string, number and boolean options, separate and inline values', () => {
  assert.deepEqual(parseFlags(['--kinds', 'diagnostics,train'], SPEC), { kinds: 'diagnostics,train' });
  assert.deepEqual(parseFlags(['--kinds=a,b'], SPEC), { kinds: 'a,b' });
  assert.deepEqual(parseFlags(['--steps', '12'], SPEC), { steps: 12 });
  assert.deepEqual(parseFlags(['--steps=2.5'], SPEC), { steps: 2.5 });
  assert.deepEqual(parseFlags(['--queue'], SPEC), { queue: true });
  assert.deepEqual(parseFlags(['--queue', '--steps', '-3', '--kinds', 'x'], SPEC), {
    queue: true,
    steps: -3,
    kinds: 'x',
  });
  assert.equal(typeof parseFlags(['--steps', '7'], SPEC).steps, 'number');
});

test('parseFlags: the last of a repeated option wins', () => {
  assert.deepEqual(parseFlags(['--kinds', 'a', '--kinds', 'b'], SPEC), { kinds: 'b' });
});

test('parseFlags: unknown options are named, with the known ones as the fix', () => {
  userError(() => parseFlags(['--nope'], SPEC), /unknown option --nope/);
  userError(() => parseFlags(['--nope'], SPEC), /--kinds, --steps, --queue/);
  userError(() => parseFlags(['--x'], {}), /known: none/);
});

test('parseFlags: positional arguments are refused', () => {
  userError(() => parseFlags(['worker'], SPEC), /unexpected argument "worker"/);
  userError(() => parseFlags(['-q'], SPEC), /unexpected argument "-q"/);
});

test('parseFlags: a missing value is refused', () => {
  userError(() => parseFlags(['--kinds'], SPEC), /option --kinds needs a value/);
  userError(() => parseFlags(['--queue', '--steps'], SPEC), /option --steps needs a value/);
});

test('parseFlags: a non-number for a number option is refused', () => {
  userError(() => parseFlags(['--steps', 'ten'], SPEC), /option --steps: "ten" is not a number/);
  userError(() => parseFlags(['--steps=NaN'], SPEC), /is not a number/);
  userError(() => parseFlags(['--steps', 'Infinity'], SPEC), /is not a number/);
});

test('parseFlags: an inline value may itself contain "="', () => {
  assert.deepEqual(parseFlags(['--kinds=a=b'], SPEC), { kinds: 'a=b' });
});

test('parseFlags: an empty number is refused, not read as 0', () => {
  userError(() => parseFlags(['--steps='], SPEC), /is not a number/);
});
