// The one arithmetic reader behind the demonstrations' programs (workers/tasks/arith-expr.ts): Python's precedence
// whatever the number type, and null for what the type cannot compute exactly.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evalExpression, FLOAT_OPS, INT_OPS } from '../../workers/tasks/arith-expr.ts';

test('** binds tighter than a unary sign and to the right, as in Python', () => {
  assert.equal(evalExpression('-2**2', FLOAT_OPS), -4);
  assert.equal(evalExpression('2**3**2', FLOAT_OPS), 512);
  assert.equal(evalExpression('2**-1', FLOAT_OPS), 0.5);
  assert.equal(evalExpression('+3 - -2', FLOAT_OPS), 5);
  assert.equal(evalExpression('2*-3', FLOAT_OPS), -6);
  assert.equal(evalExpression('(1.5+2.5)/2', FLOAT_OPS), 2);
});

test('an operator the type lacks, a division by zero or a stray character gives null', () => {
  assert.equal(evalExpression('7 // 2', FLOAT_OPS), null);
  assert.equal(evalExpression('10**400', FLOAT_OPS), null); // not finite
  assert.equal(evalExpression('1/0', FLOAT_OPS), null);
  assert.equal(evalExpression('7 / 2', INT_OPS), null);
  assert.equal(evalExpression('2 ** 3', INT_OPS), null);
  assert.equal(evalExpression('1.5 + 1', INT_OPS), null);
  assert.equal(evalExpression('1 // (3 - 3)', INT_OPS), null);
  assert.equal(evalExpression('1 + 2)', INT_OPS), null);
  assert.equal(evalExpression('', INT_OPS), null);
  assert.equal(evalExpression('-7 // 2 * 3', INT_OPS), -12n);
});
