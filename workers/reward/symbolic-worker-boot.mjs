// Worker-thread entry: loads TypeScript through tsx (Node 20 does not apply the parent's --import hooks to
// worker threads reliably), then runs symbolic-worker.ts.
import { register } from 'tsx/esm/api';

register();
await import(new URL('./symbolic-worker.ts', import.meta.url).href);
