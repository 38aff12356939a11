import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrismaSchema } from '../helpers/prisma-schema.ts';
import { normalizeDefault } from '../helpers/introspect.ts';

const SCHEMA = `
// a comment with "quotes" and @@index([x])
datasource db {
  provider     = "postgresql"
  relationMode = "prisma"
}

enum Role {
  ADMIN @map("admin")
  USER

  @@map("roles")
}

/// A user.
model User {
  id      Int      @id @default(autoincrement())
  email   String   @unique(map: "user_email") @db.VarChar(255) // trailing comment // with slashes
  role    Role     @default(USER)
  tags    String[]
  geo     Unsupported("point")?
  note    String?  @default(dbgenerated("'//not a comment'::text"))
  posts   Post[]   @relation("authored")
  createdAt DateTime @default(now()) @map("created_at")
  updatedAt DateTime @updatedAt

  @@index([role, createdAt(sort: Desc)], type: Hash)
  @@map("users")
}

model Post {
  authorId Int
  slug     String
  author   User   @relation("authored", fields: [authorId], references: [id], onDelete: Cascade, map: "post_author")

  @@id([authorId, slug])
  @@unique(fields: [slug])
}
`;

test('models resolve to tables, columns, keys and relations with their database names', () => {
  const s = parsePrismaSchema(SCHEMA);
  assert.equal(s.provider, 'postgresql');
  assert.equal(s.relationMode, 'prisma');
  assert.deepEqual(s.enums, [
    {
      name: 'Role',
      dbName: 'roles',
      values: [
        { name: 'ADMIN', dbName: 'admin' },
        { name: 'USER', dbName: 'USER' },
      ],
    },
  ]);

  const [user, post] = s.models;
  assert.equal(user!.table, 'users');
  assert.deepEqual(
    user!.columns.map((f) => [f.column, f.kind, f.type, f.optional, f.list]),
    [
      ['id', 'scalar', 'Int', false, false],
      ['email', 'scalar', 'String', false, false],
      ['role', 'enum', 'Role', false, false],
      ['tags', 'scalar', 'String', false, true],
      ['geo', 'unsupported', 'Unsupported("point")', true, false],
      ['note', 'scalar', 'String', true, false],
      ['created_at', 'scalar', 'DateTime', false, false],
      ['updatedAt', 'scalar', 'DateTime', false, false],
    ],
  );
  const field = (name: string) => user!.fields.find((f) => f.name === name)!;
  assert.equal(field('posts').kind, 'relation');
  assert.deepEqual(field('email').nativeType, { name: 'VarChar', args: ['255'] });
  assert.deepEqual(field('id').default, { kind: 'call', name: 'autoincrement', args: [] });
  assert.deepEqual(field('role').default, { kind: 'ident', value: 'USER' });
  assert.deepEqual(field('note').default, {
    kind: 'call',
    name: 'dbgenerated',
    args: [{ name: null, value: { kind: 'string', value: "'//not a comment'::text" } }],
  });
  assert.equal(field('updatedAt').updatedAt, true);
  assert.deepEqual(user!.primaryKey, { map: null, columns: [{ field: 'id', column: 'id', sort: 'Asc' }], type: null });
  assert.deepEqual(user!.uniques, [
    { map: 'user_email', columns: [{ field: 'email', column: 'email', sort: 'Asc' }], type: null },
  ]);
  assert.deepEqual(user!.indexes, [
    {
      map: null,
      columns: [
        { field: 'role', column: 'role', sort: 'Asc' },
        { field: 'createdAt', column: 'created_at', sort: 'Desc' },
      ],
      type: 'Hash',
    },
  ]);
  assert.deepEqual(user!.relations, []);

  assert.deepEqual(
    post!.primaryKey?.columns.map((c) => c.column),
    ['authorId', 'slug'],
  );
  assert.deepEqual(
    post!.uniques.map((u) => u.columns.map((c) => c.column)),
    [['slug']],
  );
  assert.deepEqual(post!.relations, [
    {
      field: 'author',
      model: 'User',
      table: 'users',
      columns: ['authorId'],
      references: ['id'],
      optional: false,
      onDelete: 'Cascade',
      onUpdate: null,
      map: 'post_author',
    },
  ]);
});

test('what the reader does not understand is an error naming the model and field', () => {
  const model = (body: string) => `model A {\n  id String @id\n${body}\n}\n`;
  assert.throws(() => parsePrismaSchema(model('  n Strin')), /A\.n has unknown type Strin/);
  assert.throws(() => parsePrismaSchema(model('  @@index([nope])')), /A has no scalar field nope/);
  assert.throws(() => parsePrismaSchema(model('  n String @default("x)')), /unterminated string/);
  assert.throws(
    () => parsePrismaSchema(`${model('  bs B[]')}model B {\n  id String @id\n  as A[]\n}\n`),
    /implicit many-to-many relation A\.bs/,
  );
  assert.throws(() => parsePrismaSchema('type Address {\n  street String\n}\n'), /composite type Address/);
});

test('column defaults read the same from SQLite and PostgreSQL spellings', () => {
  const cases: [string | null, string | null][] = [
    [null, null],
    ['CURRENT_TIMESTAMP', 'now()'],
    ['now()', 'now()'],
    ["'train'", '"train"'],
    ["'train'::text", '"train"'],
    ["('it''s'::character varying)", '"it\'s"'],
    ["'a::b'::text", '"a::b"'],
    ["''", '""'],
    ['0', '0'],
    ['(-1)', '-1'],
    ["'-1'::integer", '-1'],
    ["'7'::text", '"7"'],
    ['1.50', '1.5'],
    ['FALSE', 'false'],
    ['true', 'true'],
    ['\'ADMIN\'::"Role"', '"ADMIN"'],
    [`nextval('"User_id_seq"'::regclass)`, 'autoincrement()'],
    ['gen_random_uuid()', 'gen_random_uuid()'],
  ];
  for (const [sql, want] of cases) assert.equal(normalizeDefault(sql), want, String(sql));
});
