// The sandbox's two system-call lists stay apart: nothing refused is allowed (except where only some arguments are
// refused, which the filter compiles as a rule for those arguments), and the calls only the zygote needs are not
// on the calls' list (each call's own program refuses them). Names are unique.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ALLOWED_SYSCALLS, ZYGOTE_SYSCALLS } from '../../workers/sandbox/syscall-allow.ts';
import { REFUSED_SYSCALLS } from '../../workers/sandbox/syscall-filter.ts';

test('no wholly refused call is on the allow list', () => {
  const whole = REFUSED_SYSCALLS.filter((r) => r.arg0 === undefined && r.arg0_not === undefined).map((r) => r.name);
  assert.deepEqual(
    ALLOWED_SYSCALLS.filter((n) => whole.includes(n)),
    [],
  );
});

test('the calls only the zygote needs are not on the calls’ list', () => {
  assert.deepEqual(
    ZYGOTE_SYSCALLS.filter((n) => ALLOWED_SYSCALLS.includes(n)),
    [],
  );
});

test('each call is named once', () => {
  for (const list of [ALLOWED_SYSCALLS, ZYGOTE_SYSCALLS]) assert.equal(new Set(list).size, list.length);
});
