import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { failureDetails } from '../../scripts/failure-details.mjs';

/** What `npm test` prints last when a suite fails: CI shows only a log's tail. Fixtures are real reporter output. */
const fixture = (name: string) => fs.readFileSync(`tests/fixtures/test-output/${name}`, 'utf8');

test("node's spec reporter: the failing test and its assertion, without stack frames", () => {
  const why: string = failureDetails(fixture('node-spec.txt'));
  assert.match(why, /✖ the zygote is never replaced/);
  assert.match(why, /AssertionError \[ERR_ASSERTION\]: restarts/);
  assert.match(why, /1 !== 0/);
  assert.doesNotMatch(why, /^\s+at /m, 'no stack frames');
  assert.doesNotMatch(why, /✔ fine|\bfine\b/, 'not the passing test');
});

test("Playwright's list reporter: title, error, expected and received, the failing source line", () => {
  const why: string = failureDetails(fixture('playwright-list.txt'));
  const lines = why.split('\n');
  assert.equal(lines[0], 'fail.spec.ts:2:1 › a failing spec › the badge');
  for (const want of ['Error: the run succeeded', 'Expected: "succeeded"', 'Received: "failed"'])
    assert.ok(lines.includes(`  ${want}`), `${want} in:\n${why}`);
  assert.ok(
    lines.some((l) => /^ {2}> 4 \|.*toBe\('succeeded'\)/.test(l)),
    `the failing line in:\n${why}`,
  );
  assert.ok(!lines.some((l) => /^ {2}[2357] \|/.test(l)), 'the code frame keeps only the failing line');
  assert.ok(!why.includes('a passing spec'), 'not the passing test');
  assert.ok(lines.length <= 10, `short: ${lines.length} lines`);
});

test('nothing recognisable: nothing, never a crash', () => {
  assert.equal(failureDetails('Error: spawn biome ENOENT\n'), '');
});
