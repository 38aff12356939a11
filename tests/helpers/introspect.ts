import { openDatabase } from '../../server/db/client.ts';

/**
 * What a migrated database holds, in one shape for both dialects: tables, columns (declared type, NOT NULL, default),
 * primary key, indexes and foreign keys, read from the catalog (SQLite: sqlite_master and the table_info,
 * index_list, index_xinfo and foreign_key_list pragmas; PostgreSQL: pg_attribute, pg_index, pg_constraint).
 * Defaults come back in one spelling (see normalizeDefault) so that they compare across dialects.
 */
export interface DbColumn {
  type: string;
  notNull: boolean;
  default: string | null;
}
/** Column names in key order, `"col DESC"` for a descending one. */
export interface DbIndex {
  unique: boolean;
  columns: string[];
  method: string | null;
  predicate: string | null;
}
export interface DbForeignKey {
  name: string | null;
  columns: string[];
  refTable: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
}
export interface DbTable {
  columns: Map<string, DbColumn>;
  /** SQLite primary keys have no name. */
  primaryKey: { name: string | null; columns: string[] } | null;
  /** By name; the primary key's own index is not listed. */
  indexes: Map<string, DbIndex>;
  foreignKeys: DbForeignKey[];
}
export type DbSchema = Map<string, DbTable>;

const PG_ACTIONS: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};
const NUMERIC_CAST = /^(smallint|integer|bigint|int[248]?|real|double precision|float[48]|numeric|decimal)\b/i;

/**
 * One spelling for a column default as either database reports it: `now()` for CURRENT_TIMESTAMP, `autoincrement()`
 * for a sequence, JSON for a string literal (`'train'::text` → `"train"`), plain numbers and `true`/`false`, and any
 * other expression as written.
 */
export function normalizeDefault(sql: string | null): string | null {
  if (sql === null) return null;
  let s = sql.trim();
  let numeric = false;
  for (let changed = true; changed; ) {
    changed = false;
    const cast = /^(.*)::(?:"[^"]+"|[a-z_][a-z0-9_ ]*(?:\(\d+(?:,\s*\d+)?\))?)(?:\[\])?$/is.exec(s);
    if (cast && !inString(cast[1]!)) {
      numeric ||= NUMERIC_CAST.test(s.slice(cast[1]!.length + 2));
      s = cast[1]!.trim();
      changed = true;
    }
    if (s.startsWith('(') && s.endsWith(')') && closes(s) === s.length - 1) {
      s = s.slice(1, -1).trim();
      changed = true;
    }
  }
  const literal = /^'((?:[^']|'')*)'$/s.exec(s);
  if (literal) {
    const v = literal[1]!.replace(/''/g, "'");
    return numeric && isNumber(v) ? String(Number(v)) : JSON.stringify(v);
  }
  if (isNumber(s)) return String(Number(s));
  if (/^(true|false)$/i.test(s)) return s.toLowerCase();
  if (/^(current_timestamp|now\(\))$/i.test(s)) return 'now()';
  if (/^nextval\(/i.test(s)) return 'autoincrement()';
  return s;
}

const isNumber = (s: string) => /^[-+]?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(s);

/** Whether `s` ends inside an open string literal (so a `::` after it is part of the string). */
function inString(s: string): boolean {
  return (s.match(/'/g)?.length ?? 0) % 2 === 1;
}

/** Index of the parenthesis that closes the one at 0. */
function closes(s: string): number {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === "'") quoted = !quoted;
    else if (!quoted && c === '(') depth++;
    else if (!quoted && c === ')' && --depth === 0) return i;
  }
  return -1;
}

function table(schema: DbSchema, name: string): DbTable {
  let t = schema.get(name);
  if (!t) schema.set(name, (t = { columns: new Map(), primaryKey: null, indexes: new Map(), foreignKeys: [] }));
  return t;
}

const SQLITE_TABLES = `SELECT "name" FROM sqlite_master WHERE "type" = 'table' AND "name" NOT LIKE 'sqlite_%'`;

async function introspectSqlite(q: <T>(sql: string) => Promise<T[]>): Promise<DbSchema> {
  const schema: DbSchema = new Map();
  const tables = await q<{ name: string; sql: string }>(
    `SELECT "name", "sql" FROM sqlite_master WHERE "type" = 'table' AND "name" NOT LIKE 'sqlite_%' ORDER BY "name"`,
  );
  for (const t of tables) table(schema, t.name);
  const cols = await q<{ t: string; name: string; type: string; notnull: unknown; dflt: string | null; pk: unknown }>(
    `SELECT m."name" AS "t", p."name", p."type", p."notnull", p."dflt_value" AS "dflt", p."pk" FROM (${SQLITE_TABLES}) m, pragma_table_info(m."name") p ORDER BY m."name", p."cid"`,
  );
  const pk = new Map<string, { column: string; pos: number }[]>();
  for (const c of cols) {
    table(schema, c.t).columns.set(c.name, {
      type: c.type.toUpperCase(),
      notNull: Number(c.notnull) === 1,
      default: normalizeDefault(c.dflt),
    });
    if (Number(c.pk) > 0) pk.set(c.t, [...(pk.get(c.t) ?? []), { column: c.name, pos: Number(c.pk) }]);
  }
  for (const [name, parts] of pk) {
    const columns = parts.sort((a, b) => a.pos - b.pos).map((p) => p.column);
    table(schema, name).primaryKey = { name: null, columns };
    // INTEGER PRIMARY KEY AUTOINCREMENT is SQLite's autoincrement(); the keyword only shows in the table's SQL.
    const sql = tables.find((t) => t.name === name)?.sql ?? '';
    const col = table(schema, name).columns.get(columns[0]!);
    if (columns.length === 1 && col && /\bAUTOINCREMENT\b/i.test(sql)) col.default = 'autoincrement()';
  }
  const idx = await q<{
    t: string;
    name: string;
    unique: unknown;
    origin: string;
    partial: unknown;
    col: string | null;
    desc: unknown;
  }>(
    `SELECT m."name" AS "t", il."name", il."unique", il."origin", il."partial", ix."name" AS "col", ix."desc"
     FROM (${SQLITE_TABLES}) m, pragma_index_list(m."name") il, pragma_index_xinfo(il."name") ix
     WHERE ix."key" = 1 ORDER BY m."name", il."name", ix."seqno"`,
  );
  const partial = new Map<string, string>();
  if (idx.some((i) => Number(i.partial) === 1)) {
    for (const r of await q<{ name: string; sql: string }>(
      `SELECT "name", "sql" FROM sqlite_master WHERE "type" = 'index' AND "sql" IS NOT NULL`,
    )) {
      const where = /\bWHERE\b([\s\S]*)$/i.exec(r.sql);
      if (where) partial.set(r.name, where[1]!.trim());
    }
  }
  for (const i of idx) {
    if (i.origin === 'pk') continue;
    const indexes = table(schema, i.t).indexes;
    const entry = indexes.get(i.name) ?? {
      unique: Number(i.unique) === 1,
      columns: [],
      method: null,
      predicate: partial.get(i.name) ?? null,
    };
    entry.columns.push(`${i.col ?? '(expression)'}${Number(i.desc) === 1 ? ' DESC' : ''}`);
    indexes.set(i.name, entry);
  }
  const fks = await q<{
    t: string;
    id: unknown;
    ref: string;
    from: string;
    to: string | null;
    onUpdate: string;
    onDelete: string;
  }>(
    `SELECT m."name" AS "t", fk."id", fk."table" AS "ref", fk."from", fk."to", fk."on_update" AS "onUpdate", fk."on_delete" AS "onDelete"
     FROM (${SQLITE_TABLES}) m, pragma_foreign_key_list(m."name") fk ORDER BY m."name", fk."id", fk."seq"`,
  );
  const byId = new Map<string, DbForeignKey>();
  for (const f of fks) {
    const key = `${f.t}\0${Number(f.id)}`;
    let fk = byId.get(key);
    if (!fk) {
      byId.set(
        key,
        (fk = {
          name: null,
          columns: [],
          refTable: f.ref,
          refColumns: [],
          onDelete: f.onDelete.toUpperCase(),
          onUpdate: f.onUpdate.toUpperCase(),
        }),
      );
      table(schema, f.t).foreignKeys.push(fk);
    }
    fk.columns.push(f.from);
    // REFERENCES "T" without a column list means T's primary key.
    fk.refColumns.push(f.to ?? schema.get(f.ref)?.primaryKey?.columns[fk.refColumns.length] ?? '(primary key)');
  }
  return schema;
}

async function introspectPostgres(q: <T>(sql: string) => Promise<T[]>): Promise<DbSchema> {
  const schema: DbSchema = new Map();
  const inSchema = `n."nspname" = current_schema()`;
  for (const t of await q<{ name: string }>(
    `SELECT c."relname"::text AS "name" FROM pg_class c JOIN pg_namespace n ON n."oid" = c."relnamespace" WHERE ${inSchema} AND c."relkind" IN ('r', 'p') ORDER BY 1`,
  ))
    table(schema, t.name);
  const cols = await q<{
    t: string;
    name: string;
    type: string;
    notNull: boolean;
    dflt: string | null;
    identity: string;
  }>(
    `SELECT c."relname"::text AS "t", a."attname"::text AS "name", format_type(a."atttypid", a."atttypmod") AS "type", a."attnotnull" AS "notNull",
            pg_get_expr(d."adbin", d."adrelid") AS "dflt", a."attidentity"::text AS "identity"
     FROM pg_attribute a JOIN pg_class c ON c."oid" = a."attrelid" JOIN pg_namespace n ON n."oid" = c."relnamespace"
     LEFT JOIN pg_attrdef d ON d."adrelid" = a."attrelid" AND d."adnum" = a."attnum"
     WHERE ${inSchema} AND c."relkind" IN ('r', 'p') AND a."attnum" > 0 AND NOT a."attisdropped" ORDER BY 1, a."attnum"`,
  );
  for (const c of cols) {
    const identity =
      c.identity === 'a'
        ? 'GENERATED ALWAYS AS IDENTITY'
        : c.identity === 'd'
          ? 'GENERATED BY DEFAULT AS IDENTITY'
          : null;
    table(schema, c.t).columns.set(c.name, {
      type: c.type,
      notNull: c.notNull,
      default: identity ?? normalizeDefault(c.dflt),
    });
  }
  const idx = await q<{
    t: string;
    name: string;
    unique: boolean;
    primary: boolean;
    method: string;
    predicate: string | null;
    col: string | null;
    desc: boolean;
  }>(
    `SELECT t."relname"::text AS "t", i."relname"::text AS "name", x."indisunique" AS "unique", x."indisprimary" AS "primary", am."amname"::text AS "method",
            pg_get_expr(x."indpred", x."indrelid") AS "predicate", a."attname"::text AS "col", (x."indoption"[(k."ord" - 1)::int] & 1) = 1 AS "desc"
     FROM pg_index x JOIN pg_class t ON t."oid" = x."indrelid" JOIN pg_class i ON i."oid" = x."indexrelid"
     JOIN pg_namespace n ON n."oid" = t."relnamespace" JOIN pg_am am ON am."oid" = i."relam"
     CROSS JOIN LATERAL unnest(x."indkey") WITH ORDINALITY AS k("attnum", "ord")
     LEFT JOIN pg_attribute a ON a."attrelid" = t."oid" AND a."attnum" = k."attnum"
     WHERE ${inSchema} AND k."ord" <= x."indnkeyatts" ORDER BY 1, 2, k."ord"`,
  );
  for (const i of idx) {
    const t = table(schema, i.t);
    const col = i.col ?? '(expression)';
    if (i.primary) {
      if (t.primaryKey?.name === i.name) t.primaryKey.columns.push(col);
      else t.primaryKey = { name: i.name, columns: [col] };
      continue;
    }
    const entry = t.indexes.get(i.name) ?? { unique: i.unique, columns: [], method: i.method, predicate: i.predicate };
    entry.columns.push(`${col}${i.desc ? ' DESC' : ''}`);
    t.indexes.set(i.name, entry);
  }
  const names = (key: string, rel: string) =>
    `(SELECT to_json(array_agg(a."attname"::text ORDER BY k."ord"))::text FROM unnest(c."${key}") WITH ORDINALITY AS k("attnum", "ord")
      JOIN pg_attribute a ON a."attrelid" = c."${rel}" AND a."attnum" = k."attnum")`;
  for (const f of await q<{
    t: string;
    name: string;
    ref: string;
    del: string;
    upd: string;
    cols: string;
    refCols: string;
  }>(
    `SELECT t."relname"::text AS "t", c."conname"::text AS "name", r."relname"::text AS "ref", c."confdeltype"::text AS "del", c."confupdtype"::text AS "upd",
            ${names('conkey', 'conrelid')} AS "cols", ${names('confkey', 'confrelid')} AS "refCols"
     FROM pg_constraint c JOIN pg_class t ON t."oid" = c."conrelid" JOIN pg_class r ON r."oid" = c."confrelid" JOIN pg_namespace n ON n."oid" = t."relnamespace"
     WHERE ${inSchema} AND c."contype" = 'f' ORDER BY 1, 2`,
  )) {
    table(schema, f.t).foreignKeys.push({
      name: f.name,
      columns: JSON.parse(f.cols),
      refTable: f.ref,
      refColumns: JSON.parse(f.refCols),
      onDelete: PG_ACTIONS[f.del] ?? f.del,
      onUpdate: PG_ACTIONS[f.upd] ?? f.upd,
    });
  }
  return schema;
}

/** Read the schema of the (migrated) database at `url`. */
export async function introspect(url: string): Promise<DbSchema> {
  const db = await openDatabase(url);
  try {
    const q = <T>(sql: string) => db.query<T>(sql);
    return db.dialect === 'sqlite' ? await introspectSqlite(q) : await introspectPostgres(q);
  } finally {
    await db.close();
  }
}
