/**
 * bench:signin — how fast a signed-in request stays while 60 callers flood the password sign-in,
 * against the built app as `npm start` serves it. Idle and flooded samples of the same signed-in
 * request (`auth.me`) alternate in rounds, so a neighbour's load falls on both sides, and the ratio of their medians is
 * printed; so is how long one wrong sign-in takes right after a flood's callers hung up against one alone (near 1×
 * when the queued callers left unhashed). The test (tests/integration/sign-in-limits.test.ts) asserts the mechanism;
 * this measures the speed.
 */
import path from 'node:path';
import { openDatabase } from '../server/db/client.ts';
import { createUser } from '../server/auth/users.ts';
import { startWebServer, webBuilt } from '../tests/helpers/web-server.ts';
import { cookieOf, median, request, signIn, startFlood, TRUSTED } from '../tests/helpers/sign-in-http.ts';
import { benchFlags } from './flags.ts';

const flags = benchFlags('bench:signin', 'npx tsx bench/signin.ts [--rounds N] [--samples N]', {
  rounds: 'number',
  samples: 'number',
});
const ROUNDS = (flags.rounds as number | undefined) ?? 3;
const SAMPLES = (flags.samples as number | undefined) ?? 9;
if (!webBuilt()) {
  console.error('bench:signin: no web build (.next): run `node scripts/setup.mjs` first');
  process.exit(2);
}

const web = await startWebServer({ TOOLSMITH_TRUSTED_PROXIES: TRUSTED }, 'toolsmith-bench-signin-');
try {
  const db = await openDatabase(`file:${path.join(web.dataDir, 'toolsmith.db')}`);
  await createUser(db, { email: 'bench@example.com', role: 'viewer', password: 'the right password' });
  await db.close();
  const me = await signIn(web.port, 'bench@example.com', 'the right password', TRUSTED, {
    'x-forwarded-for': '198.51.100.90',
  });
  if (me.status !== 200) throw new Error(`sign-in failed: ${me.status} ${me.body}`);
  const cookie = cookieOf(me);
  const probe = async () => {
    const r = await request(web.port, 'GET', '/api/trpc/auth.me', {
      from: TRUSTED,
      headers: { cookie, 'x-forwarded-for': '198.51.100.90' },
    });
    if (r.status !== 200) throw new Error(`auth.me answered ${r.status}: ${r.body}`);
    return r.ms;
  };
  let fresh = 0;
  const oneSignIn = async () =>
    (
      await signIn(web.port, `single${++fresh}@example.com`, 'not the password', TRUSTED, {
        'x-forwarded-for': `100.65.0.${fresh}`,
      })
    ).ms;
  for (let i = 0; i < 5; i++) await probe();
  const single: number[] = [];
  for (let i = 0; i < 3; i++) single.push(await oneSignIn());
  const idle: number[] = [];
  const busy: number[] = [];
  const drains: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (let i = 0; i < SAMPLES; i++) idle.push(await probe());
    const flood = startFlood(web.port);
    while (flood.outstanding() < 55) await new Promise((r) => setTimeout(r, 20));
    for (let i = 0; i < SAMPLES; i++) busy.push(await probe());
    await flood.stop();
    drains.push(await oneSignIn());
  }
  const f = (ms: number) => `${ms.toFixed(1)} ms`;
  console.log(`signed-in request (auth.me), ${ROUNDS} rounds × ${SAMPLES} samples each side, 60 callers flooding:`);
  console.log(
    `  idle median ${f(median(idle))}, under the flood ${f(median(busy))}: ${(median(busy) / median(idle)).toFixed(2)}×`,
  );
  console.log(
    `  one wrong sign-in right after a flood's callers hung up ${f(median(drains))} vs alone ${f(median(single))}: ${(median(drains) / median(single)).toFixed(2)}×`,
  );
} finally {
  await web.stop();
}
