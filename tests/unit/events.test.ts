import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isUniqueViolation } from '../../server/store/events.ts';

test('isUniqueViolation: SQLite, PostgreSQL and Prisma wordings', () => {
  assert.equal(isUniqueViolation(new Error('UNIQUE constraint failed: RunEvent.runId, RunEvent.seq')), true);
  assert.equal(isUniqueViolation(new Error('duplicate key value violates unique constraint "RunEvent_pkey"')), true);
  assert.equal(isUniqueViolation(new Error('Unique constraint failed on the fields: (`runId`,`seq`)')), true);
  assert.equal(isUniqueViolation(new Error('SqliteError: SQLITE_CONSTRAINT_PRIMARYKEY')), true);
  assert.equal(isUniqueViolation(new Error('Invalid `prisma.$executeRawUnsafe()` invocation: P2002')), true);
});

test("isUniqueViolation: the code may only be in the error's meta", () => {
  assert.equal(isUniqueViolation(Object.assign(new Error('Raw query failed'), { meta: { code: '23505' } })), true);
  assert.equal(
    isUniqueViolation(
      Object.assign(new Error('Raw query failed'), {
        meta: {
          driverAdapterError: {
            cause: { kind: 'UniqueConstraintViolation', constraint: { fields: ['seq'] } },
            message: 'unique constraint',
          },
        },
      }),
    ),
    true,
  );
});

test('isUniqueViolation: other errors are not', () => {
  assert.equal(isUniqueViolation(new Error('syntax error at or near "SELEC"')), false);
  assert.equal(isUniqueViolation(new Error('database is locked')), false);
  // Other SQLite constraint failures are not duplicates: retrying them cannot help.
  assert.equal(
    isUniqueViolation(
      new Error(
        'Raw query failed. Code: `SQLITE_CONSTRAINT_NOTNULL`. Message: `NOT NULL constraint failed: RunEvent.message`',
      ),
    ),
    false,
  );
  assert.equal(
    isUniqueViolation(
      new Error('Raw query failed. Code: `SQLITE_CONSTRAINT_FOREIGNKEY`. Message: `FOREIGN KEY constraint failed`'),
    ),
    false,
  );
  assert.equal(
    isUniqueViolation(
      new Error('Raw query failed. Code: `SQLITE_CONSTRAINT_CHECK`. Message: `CHECK constraint failed: x`'),
    ),
    false,
  );
  assert.equal(isUniqueViolation(new Error('null value in column "seq" violates not-null constraint')), false);
  assert.equal(isUniqueViolation(Object.assign(new Error('x'), { meta: { code: '23503' } })), false);
  assert.equal(isUniqueViolation(undefined), false);
  assert.equal(isUniqueViolation(null), false);
  assert.equal(isUniqueViolation('UNIQUE'), false);
  assert.equal(isUniqueViolation({}), false);
});
