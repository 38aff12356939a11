import { freshDatabase } from '../helpers/db.ts';
const t0 = Date.now();
const f = await freshDatabase();
console.log('fresh', Date.now() - t0, f.url);
await f.close();
