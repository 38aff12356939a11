import { test } from 'node:test';
import assert from 'node:assert/strict';
import { redact } from '../../server/db/url.ts';

// redact() is what diagnostics lines (run events every viewer reads) and error messages print of DATABASE_URL.
const SECRET = 's3cr3t';

test('redact hides the userinfo password in every form, keeping the user, host and database', () => {
  for (const [url, shown] of [
    [
      `postgres://toolsmith:${SECRET}@db.internal:5432/toolsmith`,
      'postgres://toolsmith:***@db.internal:5432/toolsmith',
    ],
    [`postgresql://toolsmith:${SECRET}@db/toolsmith`, 'postgresql://toolsmith:***@db/toolsmith'],
    [`postgres://:${SECRET}@db/toolsmith`, 'postgres://:***@db/toolsmith'],
    [`postgres://u:${SECRET}@with@at@db/toolsmith`, 'postgres://u:***@db/toolsmith'],
    [`postgres://u:${SECRET}/?#x@db/toolsmith`, 'postgres://u:***@db/toolsmith'],
    [`postgres://u:${SECRET}%40x@db/toolsmith`, 'postgres://u:***@db/toolsmith'],
    [`postgres://u:pass=${SECRET}@db/toolsmith`, 'postgres://u:***@db/toolsmith'],
  ]) {
    assert.equal(redact(url!), shown, url);
  }
});

test('redact hides credential query parameters: ?password=, &password=, sslpassword, sslkey, passfile, any case, percent-encoded', () => {
  const cases: [string, string][] = [
    [`postgres://db/toolsmith?password=${SECRET}`, 'postgres://db/toolsmith?password=***'],
    [
      `postgres://u@db/toolsmith?sslmode=require&password=${SECRET}&application_name=ts`,
      'postgres://u@db/toolsmith?sslmode=require&password=***&application_name=ts',
    ],
    [`postgres://db/t?PASSWORD=${SECRET}`, 'postgres://db/t?PASSWORD=***'],
    [`postgres://db/t?%70assword=${SECRET}`, 'postgres://db/t?%70assword=***'],
    [`postgres://db/t?pass%77ord=${SECRET}`, 'postgres://db/t?pass%77ord=***'],
    [`postgres://db/t?pgpassword=${SECRET}`, 'postgres://db/t?pgpassword=***'],
    [
      `postgres://db/t?sslpassword=${SECRET}&sslkey=/home/u/${SECRET}.key&sslmode=verify-full`,
      'postgres://db/t?sslpassword=***&sslkey=***&sslmode=verify-full',
    ],
    [`postgres://db/t?passfile=/home/u/${SECRET}`, 'postgres://db/t?passfile=***'],
    [`postgres://db/t?x=1;password=${SECRET}`, 'postgres://db/t?x=1;password=***'],
    [`postgres://u:${SECRET}@db/t?password=${SECRET}`, 'postgres://u:***@db/t?password=***'],
  ];
  for (const [url, shown] of cases) {
    assert.equal(redact(url), shown, url);
    assert.ok(!redact(url).includes(SECRET), url);
  }
});

test("redact hides a libpq key=value string's password (quoted or not); leaves harmless URLs alone", () => {
  assert.equal(redact(`host=db password=${SECRET} dbname=t`), 'host=db password=*** dbname=t');
  assert.equal(redact(`host=db password='a ${SECRET}' dbname=t`), 'host=db password=*** dbname=t');
  assert.equal(redact(`host=db password='it\\'s ${SECRET}' dbname=t`), 'host=db password=*** dbname=t');
  for (const url of [
    'postgres://toolsmith@db:5432/toolsmith?sslmode=require',
    'file:./data/toolsmith.db',
    'file:/var/lib/toolsmith/toolsmith.db',
  ]) {
    assert.equal(redact(url), url);
  }
});

test('redact is linear: a 100 KB adversarial URL costs about ten times a 10 KB one', () => {
  const shapes = [
    (n: number) => `postgres://${'a:'.repeat(n)}`,
    (n: number) => `postgres://x/?${'a=&'.repeat(n)}`,
    (n: number) => `${'='.repeat(3 * n)}`,
    (n: number) => `password='${'\\'.repeat(3 * n)}`,
  ];
  for (const shape of shapes) {
    const small = shape(3_400);
    const big = shape(34_000);
    const cost = (s: string) => {
      let best = Infinity;
      for (let r = 0; r < 5; r++) {
        const t = process.cpuUsage();
        for (let k = 0; k < 5; k++) redact(s);
        const u = process.cpuUsage(t);
        best = Math.min(best, u.user + u.system);
      }
      return Math.max(best, 1);
    };
    const ratio = cost(big) / cost(small);
    assert.ok(ratio < 40, `${shape(1)}…: 10× the input cost ${ratio.toFixed(1)}× the work (quadratic would be ~100×)`);
  }
});
