import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatNumber, formatValue } from '../../components/ui/format.ts';
import { runColor } from '../../components/ui/run-colors.ts';

test('formatValue and formatNumber', () => {
  assert.equal(formatValue('x'), '"x"');
  assert.equal(formatValue({ a: 1 }), '{"a":1}');
  assert.equal(formatValue(undefined), '—');
  assert.equal(formatValue('a'.repeat(200), 10).length, 10);
  assert.equal(formatNumber(3), '3');
  assert.equal(formatNumber(0.123456), '0.1235');
  assert.equal(formatNumber(0.00001234), '1.234e-5');
  assert.equal(formatNumber(null), '—');
  assert.equal(formatNumber(NaN), '—');
  assert.equal(runColor(0), runColor(8));
});
