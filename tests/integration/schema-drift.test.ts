// @postgresql: also on PostgreSQL, because it checks the migrations of the dialect under test.
// Schema drift: the migrations of the dialect under test (TOOLSMITH_TEST_DIALECT), applied to an empty database,
// must create exactly what prisma/schema.prisma describes, as `prisma migrate` would create it: the same tables
// (the runner's own _toolsmith_migrations aside), the same columns with their types, NOT NULL and defaults, the
// primary keys, unique constraints and indexes (columns in order, sort order) and foreign keys. We cannot run
// `prisma migrate diff` (the schema engine is a download this environment cannot make), so the test reads the schema
// with tests/helpers/prisma-schema.ts, maps it to SQL below, and reads the database with tests/helpers/introspect.ts.
// Triggers and functions (0002_immutable_recipes) are not part of schema.prisma and are not compared.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { dialect, emptyDatabaseUrl } from '../helpers/db.ts';
import {
  introspect,
  normalizeDefault,
  type DbColumn,
  type DbForeignKey,
  type DbIndex,
  type DbSchema,
} from '../helpers/introspect.ts';
import { parsePrismaSchema, type PrismaField, type PrismaKey, type PrismaSchema } from '../helpers/prisma-schema.ts';
import { migrate, MIGRATIONS_ROOT } from '../../server/db/migrate.ts';
import type { Dialect } from '../../server/db/url.ts';
import { Prisma } from '../../server/db/generated/sqlite/client.ts';

const SCHEMA_FILE = path.resolve(MIGRATIONS_ROOT, '../schema.prisma');
const RUNNER_TABLE = '_toolsmith_migrations';

// ---- what `prisma migrate` writes for a schema ------------------------------------------------------------------

/**
 * Column types per Prisma scalar type, as each database reports them: SQLite's declared type (PRAGMA table_info),
 * PostgreSQL's format_type(). Prisma writes TEXT, INTEGER, BIGINT, REAL / DOUBLE PRECISION, DECIMAL /
 * DECIMAL(65,30), BOOLEAN, DATETIME / TIMESTAMP(3), JSONB and BLOB / BYTEA.
 */
const SCALAR_TYPE: Record<Dialect, Record<string, string>> = {
  sqlite: {
    String: 'TEXT',
    Int: 'INTEGER',
    BigInt: 'BIGINT',
    Float: 'REAL',
    Decimal: 'DECIMAL',
    Boolean: 'BOOLEAN',
    DateTime: 'DATETIME',
    Json: 'JSONB',
    Bytes: 'BLOB',
  },
  postgresql: {
    String: 'text',
    Int: 'integer',
    BigInt: 'bigint',
    Float: 'double precision',
    Decimal: 'numeric(65,30)',
    Boolean: 'boolean',
    DateTime: 'timestamp(3) without time zone',
    Json: 'jsonb',
    Bytes: 'bytea',
  },
};

/** PostgreSQL `@db.X(args)` native types as format_type() spells them. SQLite has none. */
const PG_NATIVE_TYPE: Record<string, (args: string[]) => string> = {
  Text: () => 'text',
  VarChar: (a) => (a.length ? `character varying(${a[0]})` : 'character varying'),
  Char: (a) => `character(${a[0] ?? 1})`,
  Uuid: () => 'uuid',
  SmallInt: () => 'smallint',
  Integer: () => 'integer',
  BigInt: () => 'bigint',
  Real: () => 'real',
  DoublePrecision: () => 'double precision',
  Decimal: (a) => (a.length ? `numeric(${a.join(',')})` : 'numeric'),
  Boolean: () => 'boolean',
  Timestamp: (a) => (a.length ? `timestamp(${a[0]}) without time zone` : 'timestamp without time zone'),
  Timestamptz: (a) => (a.length ? `timestamp(${a[0]}) with time zone` : 'timestamp with time zone'),
  Date: () => 'date',
  Json: () => 'json',
  JsonB: () => 'jsonb',
  ByteA: () => 'bytea',
};

/** Prisma's referential actions; its defaults are onDelete Restrict (SetNull for an optional relation), onUpdate Cascade. */
const ACTION: Record<string, string> = {
  Cascade: 'CASCADE',
  Restrict: 'RESTRICT',
  NoAction: 'NO ACTION',
  SetNull: 'SET NULL',
  SetDefault: 'SET DEFAULT',
};

/** PostgreSQL keeps the first 63 bytes of a name. */
const dbName = (d: Dialect, name: string) => (d === 'postgresql' ? name.slice(0, 63) : name);
const pgIdent = (name: string) => (/^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`);

function columnType(schema: PrismaSchema, f: PrismaField, d: Dialect): string {
  let type: string;
  if (f.kind === 'unsupported') {
    type = JSON.parse(f.type.slice('Unsupported('.length, -1)) as string;
    if (d === 'sqlite') type = type.toUpperCase();
  } else if (f.kind === 'enum') {
    type = d === 'sqlite' ? 'TEXT' : pgIdent(schema.enums.find((e) => e.name === f.type)!.dbName);
  } else if (f.nativeType) {
    const native = d === 'postgresql' ? PG_NATIVE_TYPE[f.nativeType.name] : undefined;
    if (!native)
      throw new Error(`${f.name} @db.${f.nativeType.name}: add it to PG_NATIVE_TYPE in schema-drift.test.ts`);
    type = native(f.nativeType.args);
  } else {
    type = SCALAR_TYPE[d][f.type]!;
  }
  if (f.list) {
    if (d === 'sqlite') throw new Error(`${f.name}: SQLite has no scalar lists`);
    type += '[]';
  }
  return type;
}

/** The default the database holds, in normalizeDefault's spelling; null where Prisma Client fills the value in. */
function columnDefault(schema: PrismaSchema, f: PrismaField): string | null {
  const v = f.default;
  if (!v) return null;
  switch (v.kind) {
    case 'string':
      return JSON.stringify(v.value);
    case 'number':
      return String(Number(v.value));
    case 'ident': {
      if (v.value === 'true' || v.value === 'false') return v.value;
      const value = schema.enums.find((e) => e.name === f.type)?.values.find((x) => x.name === v.value);
      return JSON.stringify(value?.dbName ?? v.value);
    }
    case 'call':
      if (v.name === 'now') return 'now()';
      if (v.name === 'autoincrement') return 'autoincrement()';
      if (v.name === 'dbgenerated')
        return v.args[0]?.value.kind === 'string' ? normalizeDefault(v.args[0].value.value) : null;
      if (['cuid', 'uuid', 'nanoid', 'ulid'].includes(v.name)) return null;
      throw new Error(`${f.name} @default(${v.name}()): not known to the drift test`);
    case 'array':
      throw new Error(`${f.name}: list defaults are not known to the drift test`);
  }
}

/** The tables `prisma migrate` would create for `schema` on `d`, and for messages, the field or model each comes from. */
function expectedSchema(schema: PrismaSchema, d: Dialect): { tables: DbSchema; origin: Map<string, string> } {
  const tables: DbSchema = new Map();
  const origin = new Map<string, string>();
  const method = (k: PrismaKey) => (d === 'postgresql' ? (k.type ?? 'BTree').toLowerCase() : null);
  const parts = (k: PrismaKey) => k.columns.map((c) => `${c.column}${c.sort === 'Desc' ? ' DESC' : ''}`);
  const keyName = (table: string, k: PrismaKey, suffix: string) =>
    dbName(d, k.map ?? `${table}_${k.columns.map((c) => c.column).join('_')}_${suffix}`);
  for (const m of schema.models.filter((x) => !x.view)) {
    origin.set(m.table, `model ${m.name}`);
    const columns = new Map<string, DbColumn>();
    for (const f of m.columns) {
      origin.set(
        `${m.table}.${f.column}`,
        `${m.name}.${f.name} ${f.type}${f.list ? '[]' : ''}${f.optional ? '?' : ''}`,
      );
      // Prisma writes scalar lists without NOT NULL.
      columns.set(f.column, {
        type: columnType(schema, f, d),
        notNull: !f.optional && !f.list,
        default: columnDefault(schema, f),
      });
    }
    const indexes = new Map<string, DbIndex>();
    for (const u of m.uniques)
      indexes.set(keyName(m.table, u, 'key'), { unique: true, columns: parts(u), method: method(u), predicate: null });
    for (const i of m.indexes)
      indexes.set(keyName(m.table, i, 'idx'), { unique: false, columns: parts(i), method: method(i), predicate: null });
    const foreignKeys: DbForeignKey[] =
      schema.relationMode === 'prisma'
        ? []
        : m.relations.map((r) => ({
            name: d === 'postgresql' ? dbName(d, r.map ?? `${m.table}_${r.columns.join('_')}_fkey`) : null,
            columns: r.columns,
            refTable: r.table,
            refColumns: r.references,
            onDelete: ACTION[r.onDelete ?? (r.optional ? 'SetNull' : 'Restrict')]!,
            onUpdate: ACTION[r.onUpdate ?? 'Cascade']!,
          }));
    const pk = m.primaryKey;
    tables.set(m.table, {
      columns,
      primaryKey: pk
        ? {
            name: d === 'postgresql' ? dbName(d, pk.map ?? `${m.table}_pkey`) : null,
            columns: pk.columns.map((c) => c.column),
          }
        : null,
      indexes,
      foreignKeys,
    });
  }
  return { tables, origin };
}

// ---- comparison -------------------------------------------------------------------------------------------------

const list = (cols: string[]) => `(${cols.join(', ')})`;
const describeIndex = (i: DbIndex) =>
  `${i.unique ? 'UNIQUE' : 'INDEX'} ${list(i.columns)}${i.method && i.method !== 'btree' ? ` USING ${i.method}` : ''}${i.predicate ? ` WHERE ${i.predicate}` : ''}`;
const describeFk = (f: DbForeignKey) =>
  `${f.name ? `"${f.name}" ` : ''}${list(f.columns)} REFERENCES "${f.refTable}"${list(f.refColumns)} ON DELETE ${f.onDelete} ON UPDATE ${f.onUpdate}`;
const describeColumn = (c: DbColumn) =>
  `${c.type}${c.notNull ? ' NOT NULL' : ''}${c.default === null ? '' : ` DEFAULT ${c.default}`}`;
const sorted = (...keys: Iterable<string>[]) => [...new Set(keys.flatMap((k) => [...k]))].sort();

/** Every difference between what schema.prisma describes and what the database has, one line each, naming where. */
function schemaDiff(expected: DbSchema, actual: DbSchema, origin: Map<string, string>): string[] {
  const out: string[] = [];
  const from = (key: string) => origin.get(key) ?? '?';
  for (const name of sorted(expected.keys(), actual.keys())) {
    const e = expected.get(name);
    const a = actual.get(name);
    if (!a) {
      out.push(`table "${name}": missing, schema.prisma has ${from(name)}`);
      continue;
    }
    if (!e) {
      out.push(`table "${name}": created by the migrations, no model in schema.prisma`);
      continue;
    }

    for (const col of sorted(e.columns.keys(), a.columns.keys())) {
      const ec = e.columns.get(col);
      const ac = a.columns.get(col);
      const where = `column "${name}"."${col}"`;
      if (!ac) {
        out.push(`${where}: missing, schema.prisma (${from(`${name}.${col}`)}) expects ${describeColumn(ec!)}`);
        continue;
      }
      if (!ec) {
        out.push(`${where}: ${describeColumn(ac)} created by the migrations, not in schema.prisma`);
        continue;
      }
      const field = `schema.prisma (${from(`${name}.${col}`)})`;
      if (ac.type !== ec.type) out.push(`${where}: type ${ac.type}, ${field} expects ${ec.type}`);
      if (ac.notNull !== ec.notNull)
        out.push(
          `${where}: ${ac.notNull ? 'NOT NULL' : 'NULL-able'}, ${field} expects ${ec.notNull ? 'NOT NULL' : 'NULL-able'}`,
        );
      if (ac.default !== ec.default)
        out.push(`${where}: default ${ac.default ?? 'none'}, ${field} expects ${ec.default ?? 'none'}`);
    }

    const pk = (p: typeof e.primaryKey) => (p ? `${p.name ? `"${p.name}" ` : ''}${list(p.columns)}` : 'none');
    if (pk(a.primaryKey) !== pk(e.primaryKey))
      out.push(`table "${name}": primary key ${pk(a.primaryKey)}, schema.prisma expects ${pk(e.primaryKey)}`);

    for (const idx of sorted(e.indexes.keys(), a.indexes.keys())) {
      const ei = e.indexes.get(idx);
      const ai = a.indexes.get(idx);
      const where = `index "${idx}" on "${name}"`;
      if (!ai) {
        const same = [...a.indexes].find(([n, x]) => !e.indexes.has(n) && describeIndex(x) === describeIndex(ei!));
        out.push(
          `${where}: missing, schema.prisma expects ${describeIndex(ei!)}${same ? `; "${same[0]}" has that shape` : ''}`,
        );
      } else if (!ei) {
        out.push(`${where}: ${describeIndex(ai)} created by the migrations, not in schema.prisma`);
      } else if (describeIndex(ai) !== describeIndex(ei)) {
        out.push(`${where}: ${describeIndex(ai)}, schema.prisma expects ${describeIndex(ei)}`);
      }
    }

    const fks = (t: typeof e) => new Map(t.foreignKeys.map((f) => [list(f.columns), f]));
    const [efk, afk] = [fks(e), fks(a)];
    for (const cols of sorted(efk.keys(), afk.keys())) {
      const ef = efk.get(cols);
      const af = afk.get(cols);
      const where = `foreign key on "${name}"${cols}`;
      if (!af) out.push(`${where}: missing, schema.prisma expects ${describeFk(ef!)}`);
      else if (!ef) out.push(`${where}: ${describeFk(af)} created by the migrations, not in schema.prisma`);
      else if (describeFk(af) !== describeFk(ef))
        out.push(`${where}: ${describeFk(af)}, schema.prisma expects ${describeFk(ef)}`);
    }
  }
  return out;
}

// ---- tests ------------------------------------------------------------------------------------------------------

const drops: (() => Promise<void>)[] = [];
after(async () => {
  for (const d of drops) await d().catch(() => {});
});

/** Apply the migrations (and any extra folder of them) to an empty database and read back its tables. */
async function migratedSchema(extraRoot?: string): Promise<DbSchema> {
  const { url, drop } = await emptyDatabaseUrl();
  drops.push(drop);
  await migrate(url);
  if (extraRoot) await migrate(url, extraRoot);
  const tables = await introspect(url);
  assert.ok(tables.delete(RUNNER_TABLE), `the migrations runner made no ${RUNNER_TABLE} table`);
  return tables;
}

const schemaText = fs.readFileSync(SCHEMA_FILE, 'utf8');
let migrated: DbSchema;
before(async () => {
  migrated = await migratedSchema();
});

function assertNoDrift(diffs: string[]) {
  if (diffs.length) {
    assert.fail(
      `prisma/schema.prisma and prisma/migrations/${dialect} disagree (${diffs.length}):\n  ${diffs.join('\n  ')}\n` +
        'add a new migration file for both dialects (never edit an applied one), or correct schema.prisma',
    );
  }
}

test('the schema reader finds the models and fields the Prisma client was generated from', () => {
  const schema = parsePrismaSchema(schemaText);
  const stale = 'if schema.prisma changed, run `node scripts/prisma-generate.mjs`';
  assert.deepEqual(schema.models.map((m) => m.name).sort(), Object.values(Prisma.ModelName).sort(), stale);
  const namespace = Prisma as unknown as Record<string, Record<string, string> | undefined>;
  for (const m of schema.models) {
    // Prisma Client leaves Unsupported(…) columns out.
    const fields = m.columns.filter((f) => f.kind !== 'unsupported').map((f) => f.name);
    assert.deepEqual(fields, Object.values(namespace[`${m.name}ScalarFieldEnum`] ?? {}), `${m.name}: ${stale}`);
  }
});

test(`the ${dialect} migrations create exactly what prisma/schema.prisma describes`, () => {
  const { tables, origin } = expectedSchema(parsePrismaSchema(schemaText), dialect);
  assertNoDrift(schemaDiff(tables, migrated, origin));
});

const T = SCALAR_TYPE[dialect];

test('a migration that drifts from schema.prisma is reported by table, column, key and index', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-drift-'));
  try {
    fs.mkdirSync(path.join(root, dialect));
    // Plain SQL both databases accept: a stray column and table, a table made again wrongly, indexes changed.
    fs.writeFileSync(
      path.join(root, dialect, '9000_drift.sql'),
      `
      ALTER TABLE "ShareLink" ADD COLUMN "extra" TEXT;
      CREATE TABLE "Stray" ("id" TEXT NOT NULL PRIMARY KEY);
      DROP TABLE "MetricPoint";
      CREATE TABLE "MetricPoint" ("runId" TEXT NOT NULL, "key" TEXT, "step" REAL NOT NULL, "value" ${T.Float} NOT NULL DEFAULT 0, "time" ${T.Float} NOT NULL, PRIMARY KEY ("runId", "step"));
      DROP INDEX "Run_status_idx";
      CREATE INDEX "Run_status_idx" ON "Run"("status", "kind");
      DROP INDEX "ShareLink_tokenHash_key";
      CREATE INDEX "ShareLink_tokenHash_key" ON "ShareLink"("tokenHash");
      DROP INDEX "Job_runId_idx";
      CREATE INDEX "Job_run" ON "Job"("runId");
    `,
    );
    const { tables, origin } = expectedSchema(parsePrismaSchema(schemaText), dialect);
    const pkName = dialect === 'postgresql' ? '"MetricPoint_pkey" ' : '';
    assert.deepEqual(schemaDiff(tables, await migratedSchema(root), origin), [
      'index "Job_run" on "Job": INDEX (runId) created by the migrations, not in schema.prisma',
      'index "Job_runId_idx" on "Job": missing, schema.prisma expects INDEX (runId); "Job_run" has that shape',
      'column "MetricPoint"."key": NULL-able, schema.prisma (MetricPoint.key String) expects NOT NULL',
      `column "MetricPoint"."step": type ${dialect === 'sqlite' ? 'REAL' : 'real'}, schema.prisma (MetricPoint.step Int) expects ${T.Int}`,
      'column "MetricPoint"."value": default 0, schema.prisma (MetricPoint.value Float) expects none',
      `table "MetricPoint": primary key ${pkName}(runId, step), schema.prisma expects ${pkName}(runId, key, step)`,
      'index "Run_status_idx" on "Run": INDEX (status, kind), schema.prisma expects INDEX (status)',
      `column "ShareLink"."extra": ${T.String} created by the migrations, not in schema.prisma`,
      'index "ShareLink_tokenHash_key" on "ShareLink": INDEX (tokenHash), schema.prisma expects UNIQUE (tokenHash)',
      'table "Stray": created by the migrations, no model in schema.prisma',
    ]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a schema.prisma that drifts from the migrations is reported by model, field and index', () => {
  let text = schemaText;
  const edit = (from: string, to: string) => {
    assert.ok(text.includes(from), `schema.prisma no longer contains ${JSON.stringify(from)}: update this test`);
    text = text.replace(from, to);
  };
  edit('  seed        Int\n', '  seed        Float\n');
  edit('  note      String?\n', '  note      String\n');
  edit('  stage       Int       @default(0)\n', '  stage       Int       @default(1)\n');
  edit('  @@index([status])\n', '  @@index([status(sort: Desc)])\n');
  edit(
    '  id        String    @id\n  tokenHash String    @unique\n',
    '  id        String    @id\n  tokenHash String    @unique @map("token_hash")\n',
  );
  text += '\nmodel Ghost {\n  id String @id\n}\n';
  const { tables, origin } = expectedSchema(parsePrismaSchema(text), dialect);
  assert.deepEqual(schemaDiff(tables, migrated, origin), [
    'table "Ghost": missing, schema.prisma has model Ghost',
    `column "Recipe"."note": NULL-able, schema.prisma (Recipe.note String) expects NOT NULL`,
    `column "Run"."seed": type ${T.Int}, schema.prisma (Run.seed Float) expects ${T.Float}`,
    'column "Run"."stage": default 0, schema.prisma (Run.stage Int) expects 1',
    'index "Run_status_idx" on "Run": INDEX (status), schema.prisma expects INDEX (status DESC)',
    `column "ShareLink"."tokenHash": ${T.String} NOT NULL created by the migrations, not in schema.prisma`,
    `column "ShareLink"."token_hash": missing, schema.prisma (ShareLink.tokenHash String) expects ${T.String} NOT NULL`,
    'index "ShareLink_tokenHash_key" on "ShareLink": UNIQUE (tokenHash) created by the migrations, not in schema.prisma',
    'index "ShareLink_token_hash_key" on "ShareLink": missing, schema.prisma expects UNIQUE (token_hash)',
  ]);
});

test('relations become foreign keys; @map and @@map name the columns, tables and keys', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolsmith-drift-'));
  try {
    fs.mkdirSync(path.join(root, dialect));
    // What `prisma migrate` writes for the two models below (PostgreSQL names an inline primary key "<table>_pkey" too).
    fs.writeFileSync(
      path.join(root, dialect, '9000_pets.sql'),
      `
      CREATE TABLE "owners" ("id" TEXT NOT NULL PRIMARY KEY);
      CREATE TABLE "pets" (
        "pet_id" TEXT NOT NULL PRIMARY KEY, "owner_id" TEXT, "name" TEXT NOT NULL DEFAULT 'it''s rex',
        CONSTRAINT "pets_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "owners" ("id") ON DELETE SET NULL ON UPDATE CASCADE
      );
      CREATE UNIQUE INDEX "pet_owner_name" ON "pets"("owner_id", "name" DESC);
    `,
    );
    const pets = `
model Owner {
  id   String @id
  pets Pet[]

  @@map("owners")
}

model Pet {
  id      String  @id @map("pet_id")
  ownerId String? @map("owner_id")
  owner   Owner?  @relation(fields: [ownerId], references: [id])
  name    String  @default("it's rex")

  @@unique([ownerId, name(sort: Desc)], map: "pet_owner_name")
  @@map("pets")
}
`;
    const actual = await migratedSchema(root);
    const diff = (text: string) => {
      const { tables, origin } = expectedSchema(parsePrismaSchema(text), dialect);
      return schemaDiff(tables, actual, origin);
    };
    assert.deepEqual(diff(schemaText + pets), []);
    const fkName = dialect === 'postgresql' ? '"pets_owner_id_fkey" ' : '';
    assert.deepEqual(diff(schemaText + pets.replace('references: [id])', 'references: [id], onDelete: Cascade)')), [
      `foreign key on "pets"(owner_id): ${fkName}(owner_id) REFERENCES "owners"(id) ON DELETE SET NULL ON UPDATE CASCADE, ` +
        `schema.prisma expects ${fkName}(owner_id) REFERENCES "owners"(id) ON DELETE CASCADE ON UPDATE CASCADE`,
    ]);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
