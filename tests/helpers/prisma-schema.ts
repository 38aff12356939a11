/**
 * A small reader for prisma/schema.prisma: models, their columns, keys, indexes and relations, resolved to database
 * names (@map, @@map) the way Prisma resolves them. Pure: text in, data out. It covers what a relational schema
 * uses and throws on what it does not understand (implicit many-to-many relations, composite types) rather than
 * guess. Used by tests/integration/schema-drift.test.ts, which compares it with what the migrations create.
 */

export type PrismaValue =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: string }
  /** true, false, an enum value, Desc, Cascade, … */
  | { kind: 'ident'; value: string }
  | { kind: 'call'; name: string; args: PrismaArg[] }
  | { kind: 'array'; items: PrismaValue[] };
export interface PrismaArg {
  name: string | null;
  value: PrismaValue;
}
/** `@default(0)` is { name: 'default', … }; `@db.VarChar(255)` is { name: 'db.VarChar', … }. */
export interface PrismaAttribute {
  name: string;
  args: PrismaArg[];
}

export interface PrismaField {
  name: string;
  /** String, Int, … ; an enum's or a model's name; or `Unsupported("…")`. */
  type: string;
  optional: boolean;
  list: boolean;
  /** A relation field is not a column: its foreign key lives in the scalar fields that `fields:` names. */
  kind: 'scalar' | 'enum' | 'relation' | 'unsupported';
  /** The column's name (@map, else the field's name). */
  column: string;
  attributes: PrismaAttribute[];
  /** `@db.VarChar(255)` is { name: 'VarChar', args: ['255'] }. */
  nativeType: { name: string; args: string[] } | null;
  default: PrismaValue | null;
  updatedAt: boolean;
}
export interface PrismaKeyPart {
  field: string;
  column: string;
  sort: 'Asc' | 'Desc';
}
/** A primary key, unique constraint or index. `map` is the database name given in the schema, if any. */
export interface PrismaKey {
  map: string | null;
  columns: PrismaKeyPart[];
  type: string | null;
}
export interface PrismaRelation {
  field: string;
  /** The model and table the foreign key points at. */
  model: string;
  table: string;
  columns: string[];
  references: string[];
  optional: boolean;
  onDelete: string | null;
  onUpdate: string | null;
  map: string | null;
}
export interface PrismaModel {
  name: string;
  /** The table's name (@@map, else the model's name). */
  table: string;
  view: boolean;
  fields: PrismaField[];
  /** The fields that are columns, in schema order. */
  columns: PrismaField[];
  primaryKey: PrismaKey | null;
  uniques: PrismaKey[];
  indexes: PrismaKey[];
  /** Relations whose foreign key is on this model's table. */
  relations: PrismaRelation[];
}
export interface PrismaEnum {
  name: string;
  dbName: string;
  values: { name: string; dbName: string }[];
}
export interface PrismaSchema {
  provider: string;
  /** 'foreignKeys' (the default: the database enforces relations) or 'prisma'. */
  relationMode: string;
  models: PrismaModel[];
  enums: PrismaEnum[];
}

export const SCALAR_TYPES = [
  'String',
  'Boolean',
  'Int',
  'BigInt',
  'Float',
  'Decimal',
  'DateTime',
  'Json',
  'Bytes',
] as const;

// ---- tokens -----------------------------------------------------------------------------------------------------

type Token = { t: 'ident' | 'string' | 'number' | 'punct' | 'nl'; v: string; line: number };

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let line = 1;
  let depth = 0; // inside ( or [ a newline does not end the line
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c === '\n') {
      if (depth === 0) out.push({ t: 'nl', v: '\n', line });
      line++;
      i++;
    } else if (/\s/.test(c)) {
      i++;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (j >= text.length) throw new Error(`schema.prisma line ${line}: unterminated string`);
      out.push({ t: 'string', v: JSON.parse(text.slice(i, j + 1)) as string, line });
      i = j + 1;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(text.slice(i))!;
      out.push({ t: 'ident', v: m[0], line });
      i += m[0].length;
    } else if (/[-0-9]/.test(c)) {
      const m = /^-?\d+(\.\d+)?([eE][-+]?\d+)?/.exec(text.slice(i));
      if (!m) throw new Error(`schema.prisma line ${line}: unexpected "${c}"`);
      out.push({ t: 'number', v: m[0], line });
      i += m[0].length;
    } else if (c === '@' && text[i + 1] === '@') {
      out.push({ t: 'punct', v: '@@', line });
      i += 2;
    } else if ('{}()[],:=?@.!'.includes(c)) {
      if (c === '(' || c === '[') depth++;
      if (c === ')' || c === ']') depth = Math.max(0, depth - 1);
      out.push({ t: 'punct', v: c, line });
      i++;
    } else {
      throw new Error(`schema.prisma line ${line}: unexpected "${c}"`);
    }
  }
  return out;
}

class Reader {
  i = 0;
  constructor(private readonly tokens: Token[]) {}
  peek(k = 0): Token | undefined {
    return this.tokens[this.i + k];
  }
  at(v: string, k = 0): boolean {
    const t = this.peek(k);
    return !!t && t.t !== 'string' && t.v === v;
  }
  next(): Token {
    const t = this.tokens[this.i++];
    if (!t) throw new Error('schema.prisma: unexpected end of file');
    return t;
  }
  expect(v: string): Token {
    const t = this.next();
    if (t.v !== v || t.t === 'string') throw new Error(`schema.prisma line ${t.line}: expected "${v}", found "${t.v}"`);
    return t;
  }
  ident(): string {
    const t = this.next();
    if (t.t !== 'ident') throw new Error(`schema.prisma line ${t.line}: expected a name, found "${t.v}"`);
    return t.v;
  }
  skipNewlines() {
    while (this.peek()?.t === 'nl') this.i++;
  }
  endOfLine() {
    const t = this.peek();
    if (t && t.t !== 'nl' && !this.at('}')) throw new Error(`schema.prisma line ${t.line}: unexpected "${t.v}"`);
  }

  value(): PrismaValue {
    const t = this.next();
    if (t.t === 'string') return { kind: 'string', value: t.v };
    if (t.t === 'number') return { kind: 'number', value: t.v };
    if (t.v === '[') {
      const items: PrismaValue[] = [];
      while (!this.at(']')) {
        items.push(this.value());
        if (!this.at(']')) this.expect(',');
      }
      this.expect(']');
      return { kind: 'array', items };
    }
    if (t.t === 'ident') {
      if (this.at('(')) return { kind: 'call', name: t.v, args: this.args() };
      return { kind: 'ident', value: t.v };
    }
    throw new Error(`schema.prisma line ${t.line}: unexpected "${t.v}"`);
  }

  args(): PrismaArg[] {
    this.expect('(');
    const args: PrismaArg[] = [];
    while (!this.at(')')) {
      const named = this.peek()?.t === 'ident' && this.at(':', 1);
      const name = named ? this.ident() : null;
      if (named) this.expect(':');
      args.push({ name, value: this.value() });
      if (!this.at(')')) this.expect(',');
    }
    this.expect(')');
    return args;
  }

  /** After "@" or "@@": a name, maybe dotted (db.VarChar), and maybe arguments. */
  attribute(): PrismaAttribute {
    let name = this.ident();
    while (this.at('.')) {
      this.next();
      name += `.${this.ident()}`;
    }
    return { name, args: this.at('(') ? this.args() : [] };
  }
}

// ---- blocks -----------------------------------------------------------------------------------------------------

interface RawField {
  name: string;
  type: string;
  optional: boolean;
  list: boolean;
  attributes: PrismaAttribute[];
}
interface RawBlock {
  keyword: string;
  name: string;
  fields: RawField[];
  blockAttributes: PrismaAttribute[];
  settings: Map<string, PrismaValue>;
}

function readBlocks(text: string): RawBlock[] {
  const r = new Reader(tokenize(text));
  const blocks: RawBlock[] = [];
  for (r.skipNewlines(); r.peek(); r.skipNewlines()) {
    const keyword = r.ident();
    const name = r.ident();
    r.expect('{');
    const block: RawBlock = { keyword, name, fields: [], blockAttributes: [], settings: new Map() };
    for (r.skipNewlines(); !r.at('}'); r.skipNewlines()) {
      if (r.at('@@')) {
        r.next();
        block.blockAttributes.push(r.attribute());
      } else if (keyword === 'generator' || keyword === 'datasource') {
        const key = r.ident();
        r.expect('=');
        block.settings.set(key, r.value());
      } else {
        const fieldName = r.ident();
        let type = '';
        let optional = false;
        let list = false;
        if (keyword !== 'enum') {
          const t = r.value();
          if (t.kind === 'ident') type = t.value;
          else if (t.kind === 'call' && t.name === 'Unsupported')
            type = `Unsupported(${JSON.stringify(argString(t.args[0]?.value))})`;
          else throw new Error(`schema.prisma: field ${name}.${fieldName} has a type this reader does not know`);
          if (r.at('[')) {
            r.next();
            r.expect(']');
            list = true;
          }
          if (r.at('?')) {
            r.next();
            optional = true;
          }
        }
        const attributes: PrismaAttribute[] = [];
        while (r.at('@')) {
          r.next();
          attributes.push(r.attribute());
        }
        block.fields.push({ name: fieldName, type, optional, list, attributes });
      }
      r.endOfLine();
    }
    r.expect('}');
    blocks.push(block);
  }
  return blocks;
}

function argString(v: PrismaValue | undefined): string {
  if (!v) return '';
  if (v.kind === 'string' || v.kind === 'number' || v.kind === 'ident') return v.value;
  throw new Error(`schema.prisma: expected a plain value, found ${JSON.stringify(v)}`);
}

/** The argument called `name`, or else the positional one at `position`. */
function arg(a: PrismaAttribute | undefined, name: string, position = -1): PrismaValue | undefined {
  if (!a) return undefined;
  const named = a.args.find((x) => x.name === name);
  if (named) return named.value;
  return position >= 0 ? a.args.filter((x) => x.name === null)[position]?.value : undefined;
}

function stringArg(a: PrismaAttribute | undefined, name: string, position = -1): string | null {
  const v = arg(a, name, position);
  return v ? argString(v) : null;
}

const attr = (attrs: PrismaAttribute[], name: string) => attrs.find((a) => a.name === name);

// ---- models -----------------------------------------------------------------------------------------------------

export function parsePrismaSchema(text: string): PrismaSchema {
  const blocks = readBlocks(text);
  const datasource = blocks.find((b) => b.keyword === 'datasource');
  const setting = (key: string) => {
    const v = datasource?.settings.get(key);
    return v ? argString(v) : null;
  };
  for (const b of blocks) {
    if (b.keyword === 'type')
      throw new Error(`schema.prisma: composite type ${b.name} is not supported by this reader`);
  }
  const enums: PrismaEnum[] = blocks
    .filter((b) => b.keyword === 'enum')
    .map((b) => ({
      name: b.name,
      dbName: stringArg(attr(b.blockAttributes, 'map'), 'name', 0) ?? b.name,
      values: b.fields.map((f) => ({
        name: f.name,
        dbName: stringArg(attr(f.attributes, 'map'), 'name', 0) ?? f.name,
      })),
    }));
  const modelBlocks = blocks.filter((b) => b.keyword === 'model' || b.keyword === 'view');
  const enumNames = new Set(enums.map((e) => e.name));
  const modelNames = new Set(modelBlocks.map((b) => b.name));

  const models: PrismaModel[] = modelBlocks.map((b) => {
    const fields: PrismaField[] = b.fields.map((f) => {
      const db = f.attributes.find((a) => a.name.startsWith('db.'));
      const kind: PrismaField['kind'] = f.type.startsWith('Unsupported(')
        ? 'unsupported'
        : enumNames.has(f.type)
          ? 'enum'
          : modelNames.has(f.type)
            ? 'relation'
            : 'scalar';
      if (kind === 'scalar' && !(SCALAR_TYPES as readonly string[]).includes(f.type)) {
        throw new Error(`schema.prisma: field ${b.name}.${f.name} has unknown type ${f.type}`);
      }
      return {
        name: f.name,
        type: f.type,
        optional: f.optional,
        list: f.list,
        kind,
        column: stringArg(attr(f.attributes, 'map'), 'name', 0) ?? f.name,
        attributes: f.attributes,
        nativeType: db ? { name: db.name.slice(3), args: db.args.map((x) => argString(x.value)) } : null,
        default: arg(attr(f.attributes, 'default'), 'value', 0) ?? null,
        updatedAt: !!attr(f.attributes, 'updatedAt'),
      };
    });
    const byName = new Map(fields.map((f) => [f.name, f]));
    const columnOf = (fieldName: string) => {
      const f = byName.get(fieldName);
      if (!f || f.kind === 'relation') throw new Error(`schema.prisma: ${b.name} has no scalar field ${fieldName}`);
      return f.column;
    };
    /** `[a, b(sort: Desc)]` from @@id/@@unique/@@index. */
    const parts = (v: PrismaValue | undefined, where: string): PrismaKeyPart[] => {
      if (!v || v.kind !== 'array') throw new Error(`schema.prisma: ${b.name} ${where} needs a list of fields`);
      return v.items.map((item) => {
        if (item.kind === 'ident') return { field: item.value, column: columnOf(item.value), sort: 'Asc' as const };
        if (item.kind === 'call') {
          const sort = item.args.find((x) => x.name === 'sort');
          return {
            field: item.name,
            column: columnOf(item.name),
            sort: sort && argString(sort.value) === 'Desc' ? ('Desc' as const) : ('Asc' as const),
          };
        }
        throw new Error(`schema.prisma: ${b.name} ${where}: unexpected ${JSON.stringify(item)}`);
      });
    };
    const blockKey = (a: PrismaAttribute): PrismaKey => ({
      map: stringArg(a, 'map'),
      columns: parts(arg(a, 'fields', 0), `@@${a.name}`),
      type: stringArg(a, 'type'),
    });
    /** @id / @unique on a field. */
    const fieldKey = (f: PrismaField, a: PrismaAttribute): PrismaKey => ({
      map: stringArg(a, 'map'),
      columns: [{ field: f.name, column: f.column, sort: stringArg(a, 'sort') === 'Desc' ? 'Desc' : 'Asc' }],
      type: null,
    });

    let primaryKey: PrismaKey | null = null;
    const uniques: PrismaKey[] = [];
    for (const f of fields) {
      const id = attr(f.attributes, 'id');
      const unique = attr(f.attributes, 'unique');
      if (id) primaryKey = fieldKey(f, id);
      if (unique) uniques.push(fieldKey(f, unique));
    }
    const blockId = attr(b.blockAttributes, 'id');
    if (blockId) {
      if (primaryKey) throw new Error(`schema.prisma: ${b.name} has both @id and @@id`);
      primaryKey = blockKey(blockId);
    }
    uniques.push(...b.blockAttributes.filter((a) => a.name === 'unique').map(blockKey));
    const indexes = b.blockAttributes.filter((a) => a.name === 'index').map(blockKey);

    return {
      name: b.name,
      table: stringArg(attr(b.blockAttributes, 'map'), 'name', 0) ?? b.name,
      view: b.keyword === 'view',
      fields,
      columns: fields.filter((f) => f.kind !== 'relation'),
      primaryKey,
      uniques,
      indexes,
      relations: [],
    };
  });

  // Relations: the side with `fields:` holds the foreign key. A list on both sides without `fields:` would be an
  // implicit many-to-many relation (a hidden join table), which this reader does not model.
  const byModel = new Map(models.map((m) => [m.name, m]));
  for (const m of models) {
    for (const f of m.fields.filter((x) => x.kind === 'relation')) {
      const rel = attr(f.attributes, 'relation');
      const fieldsArg = arg(rel, 'fields');
      const target = byModel.get(f.type)!;
      if (!fieldsArg) {
        const relName = stringArg(rel, 'name', 0);
        const other = target.fields.find(
          (x) =>
            x.kind === 'relation' &&
            x.type === m.name &&
            x !== f &&
            stringArg(attr(x.attributes, 'relation'), 'name', 0) === relName,
        );
        if (f.list && other?.list)
          throw new Error(
            `schema.prisma: implicit many-to-many relation ${m.name}.${f.name} is not supported by this reader`,
          );
        continue;
      }
      const names = (v: PrismaValue | undefined) => {
        if (!v || v.kind !== 'array')
          throw new Error(`schema.prisma: ${m.name}.${f.name} @relation needs fields: [...] and references: [...]`);
        return v.items.map((x) => argString(x));
      };
      const local = names(fieldsArg).map((n) => m.fields.find((x) => x.name === n));
      const remote = names(arg(rel, 'references')).map((n) => target.fields.find((x) => x.name === n));
      if (local.some((x) => !x) || remote.some((x) => !x))
        throw new Error(`schema.prisma: ${m.name}.${f.name} @relation names a field that does not exist`);
      m.relations.push({
        field: f.name,
        model: target.name,
        table: target.table,
        columns: local.map((x) => x!.column),
        references: remote.map((x) => x!.column),
        optional: local.some((x) => x!.optional),
        onDelete: stringArg(rel, 'onDelete'),
        onUpdate: stringArg(rel, 'onUpdate'),
        map: stringArg(rel, 'map'),
      });
    }
  }

  return {
    provider: setting('provider') ?? '',
    relationMode: setting('relationMode') ?? 'foreignKeys',
    models,
    enums,
  };
}
