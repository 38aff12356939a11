// Generates the Prisma clients for both databases from prisma/schema.prisma (the PostgreSQL one by swapping
// the provider). Offline: PRISMA_SCHEMA_ENGINE_BINARY=/bin/false stops the CLI from fetching an engine it
// does not need for `generate`.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const schema = fs.readFileSync(path.join(root, 'prisma/schema.prisma'), 'utf8');
const pgSchema = schema
  .replace('provider = "sqlite"', 'provider = "postgresql"')
  .replace('../server/db/generated/sqlite', '../server/db/generated/postgresql');
const pgPath = path.join(root, 'data/.generated/schema.postgresql.prisma');
fs.mkdirSync(path.dirname(pgPath), { recursive: true });
// The output path in the schema is relative to the schema file: keep the PostgreSQL copy one level deeper.
fs.writeFileSync(pgPath, pgSchema.replace('../server/db/generated/postgresql', '../../server/db/generated/postgresql'));
const env = {
  ...process.env,
  PRISMA_SCHEMA_ENGINE_BINARY: '/bin/false',
  PRISMA_HIDE_UPDATE_MESSAGE: '1',
  CHECKPOINT_DISABLE: '1',
};
const prisma = path.join(root, 'node_modules/.bin/prisma');
for (const file of [path.join(root, 'prisma/schema.prisma'), pgPath]) {
  execFileSync(prisma, ['generate', '--schema', file], { cwd: root, env, stdio: ['ignore', 'ignore', 'inherit'] });
}
console.log('prisma clients generated (sqlite, postgresql)');
