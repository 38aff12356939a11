import { openDatabase, type Database } from './client.ts';

// One database handle per process, kept on globalThis so Next's dev reloads do not open a new pool each time.
const holder = globalThis as unknown as { __toolsmithDb?: Promise<Database> };

export function getDb(): Promise<Database> {
  holder.__toolsmithDb ??= openDatabase().catch((e) => {
    holder.__toolsmithDb = undefined; // let the next request try again (e.g. once migrations have run)
    throw e;
  });
  return holder.__toolsmithDb;
}
