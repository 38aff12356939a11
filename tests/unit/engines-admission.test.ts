import assert from 'node:assert/strict';
import { test } from 'node:test';
import { admit, everFits } from '../../workers/engines/admission.ts';

const engines = () => [
  { id: 'a', total: 1000, reserved: 0 },
  { id: 'b', total: 600, reserved: 0 },
];

test('each request goes to the engine with the most free budget, and reserves prompt + max tokens there', () => {
  const { assignments, engines: after } = admit(
    [
      { id: '1', tokens: 300 },
      { id: '2', tokens: 300 },
      { id: '3', tokens: 300 },
    ],
    engines(),
  );
  // a: 1000 free → takes 1 (700 left); a still freest (700 > 600) → takes 2 (400 left); b (600) → takes 3.
  assert.deepEqual(
    assignments.map((x) => [x.requestId, x.engineId]),
    [
      ['1', 'a'],
      ['2', 'a'],
      ['3', 'b'],
    ],
  );
  assert.deepEqual(
    after.map((e) => e.reserved),
    [600, 300],
  );
});

test('only what fits is admitted; the rest waits, in arrival order', () => {
  const { assignments } = admit(
    [
      { id: '1', tokens: 900 },
      { id: '2', tokens: 700 },
      { id: '3', tokens: 100 },
    ],
    engines(),
  );
  // 1 → a (100 left). 2 fits nowhere (a 100, b 600): it waits, and 3 waits behind it (no starvation of 2).
  assert.deepEqual(
    assignments.map((x) => x.requestId),
    ['1'],
  );
});

test('released budget lets the waiting request in', () => {
  const busy = [
    { id: 'a', total: 1000, reserved: 900 },
    { id: 'b', total: 600, reserved: 0 },
  ];
  assert.deepEqual(admit([{ id: '2', tokens: 700 }], busy).assignments, []);
  const freed = [
    { id: 'a', total: 1000, reserved: 200 },
    { id: 'b', total: 600, reserved: 0 },
  ];
  assert.deepEqual(admit([{ id: '2', tokens: 700 }], freed).assignments, [
    { requestId: '2', engineId: 'a', tokens: 700 },
  ]);
});

test('a reservation larger than every engine can never run', () => {
  assert.equal(everFits(1001, engines()), false);
  assert.equal(everFits(1000, engines()), true);
});

test('the input state is not modified', () => {
  const e = engines();
  admit([{ id: '1', tokens: 500 }], e);
  assert.deepEqual(
    e.map((x) => x.reserved),
    [0, 0],
  );
});
