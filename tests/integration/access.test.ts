// Who may call what: every procedure of the router, enumerated from the router itself, against the table below —
// a procedure added without an entry here fails, so nothing is added open by mistake. Each is then called with no
// principal, as a viewer, a researcher and an admin (real database), and must answer 401 / 403 exactly as its role
// says. Ownership: a researcher controls only their own runs, links and recipe names; the audit log records every
// mutation, allowed or not. Scoped API tokens: a real token of each scope walks the same table.
import { afterEach, beforeEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { TRPCError } from '@trpc/server';
import { freshDatabase } from '../helpers/db.ts';
import type { Database } from '../../server/db/client.ts';
import { appRouter } from '../../server/trpc/root.ts';
import { createCallerFactory, type Access } from '../../server/trpc/init.ts';
import {
  roleRank,
  ROLES,
  SCOPE_ROLE,
  scopeOfRole,
  TOKEN_SCOPES,
  type Principal,
  type Role,
} from '../../contracts/access.ts';
import { createToken } from '../../server/auth/tokens.ts';
import { resolvePrincipal } from '../../server/auth/principal.ts';
import { principal } from '../helpers/principals.ts';
import { createUser } from '../../server/auth/users.ts';
import { EMBEDDED_ARITH_INPUT, MICRO_INPUT } from '../../server/recipes/defaults.ts';
import { seedDefaultRecipes } from '../../server/store/recipes.ts';

const EXPECTED: Record<string, Access> = {
  'system.health': 'public',
  'auth.me': 'public',
  'system.latestDiagnostics': 'admin',
  'system.runDiagnostics': 'admin',
  'system.supervisor': 'admin',
  'admin.users': 'admin',
  'admin.addUser': 'admin',
  'admin.setRole': 'admin',
  'admin.signInLink': 'admin',
  'admin.tokens': 'admin',
  'admin.disableUser': 'admin',
  'admin.enableUser': 'admin',
  'admin.removeUser': 'admin',
  'auth.changePassword': 'viewer',
  'admin.createToken': 'admin',
  'admin.revokeToken': 'admin',
  'admin.audit': 'admin',
  'runs.list': 'viewer',
  'runs.get': 'viewer',
  'runs.snapshot': 'viewer',
  'runs.series': 'viewer',
  'runs.timeline': 'viewer',
  'runs.metricKeys': 'viewer',
  'runs.events': 'viewer',
  'runs.compare': 'viewer',
  'runs.importRoots': 'viewer',
  'runs.importFolder': 'researcher',
  'runs.followImport': 'researcher',
  'runs.cancel': 'researcher',
  'runs.pause': 'researcher',
  'runs.resume': 'researcher',
  'recipes.list': 'viewer',
  'recipes.get': 'viewer',
  'recipes.versions': 'viewer',
  'recipes.validate': 'viewer',
  'recipes.preflight': 'viewer',
  'recipes.diff': 'viewer',
  'recipes.defaults': 'viewer',
  'recipes.placements': 'viewer',
  'recipes.save': 'researcher',
  'recipes.launch': 'researcher',
  'datasets.list': 'viewer',
  'datasets.get': 'viewer',
  'datasets.problems': 'viewer',
  'datasets.catalogue': 'viewer',
  'datasets.add': 'researcher',
  'trajectories.steps': 'viewer',
  'trajectories.list': 'viewer',
  'trajectories.topK': 'viewer',
  'trajectories.get': 'viewer',
  'trajectories.tokens': 'viewer',
  'trajectories.samePrompt': 'viewer',
  'trajectories.problemsAcrossRuns': 'viewer',
  'trajectories.ofProblemAcrossRuns': 'viewer',
  'evals.list': 'viewer',
  'evals.reference': 'viewer',
  'evals.compare': 'viewer',
  'models.list': 'viewer',
  'models.catalogue': 'viewer',
  'models.fetch': 'researcher',
  'share.create': 'researcher',
  'share.revoke': 'researcher',
  'share.list': 'researcher',
  'share.view.summary': 'share',
  'share.view.metrics': 'share',
  'share.view.trajectories': 'share',
  'share.view.trajectory': 'share',
  'share.view.trajectoryTokens': 'share',
  'share.view.problemTrajectories': 'share',
  'share.view.timeline': 'share',
  'share.view.events': 'share',
};

type Proc = { _def: { meta?: { access?: Access }; type: string } };
const procedures = appRouter._def.procedures as unknown as Record<string, Proc>;

let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
const makeCaller = createCallerFactory(appRouter);
beforeEach(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
});
afterEach(async () => {
  await fresh.close();
});

/** The error message of a call that fails. */
async function messageAs(p: Principal | null, path: string, input: unknown = {}): Promise<string> {
  let target: unknown = makeCaller({ db, principal: p });
  for (const part of path.split('.')) target = (target as Record<string, unknown>)[part];
  return (target as (i: unknown) => Promise<unknown>)(input).then(
    () => 'ok',
    (e: Error) => e.message,
  );
}

/** Call a procedure by its dotted path with some input; the error code, or 'ok'. */
async function callAs(p: Principal | null, path: string, input: unknown = {}): Promise<string> {
  let target: unknown = makeCaller({ db, principal: p });
  for (const part of path.split('.')) target = (target as Record<string, unknown>)[part];
  try {
    const r = await (target as (i: unknown) => Promise<unknown>)(input);
    if (r && typeof (r as AsyncIterable<unknown>)[Symbol.asyncIterator] === 'function') {
      const it = (r as AsyncIterable<unknown>)[Symbol.asyncIterator]();
      await Promise.race([it.next(), new Promise((res) => setTimeout(res, 50))]);
      await it.return?.();
    }
    return 'ok';
  } catch (e) {
    return e instanceof TRPCError ? e.code : `threw ${(e as Error).message}`;
  }
}

test('every procedure declares its access, and the table names each one', () => {
  const declared = Object.fromEntries(Object.entries(procedures).map(([k, v]) => [k, v._def.meta?.access ?? '(none)']));
  assert.deepEqual(declared, EXPECTED);
});

test('no credentials: 401 on every role procedure; share and public ones answer on their own terms', async () => {
  for (const [path, access] of Object.entries(EXPECTED)) {
    const code = await callAs(null, path);
    if (access === 'public') assert.notEqual(code, 'UNAUTHORIZED', path);
    else if (access === 'share') assert.ok(['NOT_FOUND', 'BAD_REQUEST'].includes(code), `${path}: ${code}`);
    else assert.equal(code, 'UNAUTHORIZED', path);
  }
});

test('the role matrix: below the role → 403, at or above it → past the check', async () => {
  for (const role of ROLES) {
    const p = principal(role);
    for (const [path, access] of Object.entries(EXPECTED)) {
      if (access === 'public' || access === 'share') continue;
      const code = await callAs(p, path);
      if (roleRank(role) < roleRank(access as Role)) assert.equal(code, 'FORBIDDEN', `${role} → ${path}`);
      else assert.ok(code !== 'FORBIDDEN' && code !== 'UNAUTHORIZED', `${role} → ${path}: ${code}`);
    }
  }
});

test("the scope matrix: an admin's token of each scope is refused above its scope (403 naming it), past the check at or below", async () => {
  await createUser(db, { email: 'root@lab.example', role: 'admin' });
  for (const scope of TOKEN_SCOPES) {
    const { token } = await createToken(db, { email: 'root@lab.example', scope });
    const p = await resolvePrincipal(db, new Headers({ authorization: `Bearer ${token}` }));
    assert.ok(p, scope);
    for (const [path, access] of Object.entries(EXPECTED)) {
      if (access === 'public' || access === 'share') continue;
      const code = await callAs(p, path);
      if (roleRank(SCOPE_ROLE[scope]) < roleRank(access as Role)) {
        assert.equal(code, 'FORBIDDEN', `${scope} token → ${path}`);
        assert.match(
          await messageAs(p, path),
          new RegExp(`this token's scope is ${scope} .*--scope ${scopeOfRole(access as Role)}`),
        );
      } else assert.ok(code !== 'FORBIDDEN' && code !== 'UNAUTHORIZED', `${scope} token → ${path}: ${code}`);
    }
  }
});

test("ownership: a researcher controls their own runs, links and recipe names; not others' nor the built-ins", async () => {
  const alice = await createUser(db, { email: 'alice@example.com', role: 'researcher' });
  const bob = await createUser(db, { email: 'bob@example.com', role: 'researcher' });
  const pa: Principal = { userId: alice.id, email: alice.email, role: 'researcher', via: 'session' };
  const pb: Principal = { userId: bob.id, email: bob.email, role: 'researcher', via: 'session' };
  const A = makeCaller({ db, principal: pa }),
    B = makeCaller({ db, principal: pb });
  const spec = { ...MICRO_INPUT, name: 'alice-micro' };
  const { runId } = await A.recipes.launch({ spec });
  assert.equal((await db.prisma.run.findUnique({ where: { id: runId } }))!.createdBy, alice.id);
  await assert.rejects(
    B.runs.cancel({ runId }),
    (e: TRPCError) => e.code === 'FORBIDDEN' && /someone else/.test(e.message),
  );
  await assert.rejects(B.share.create({ scope: 'run', target: { runId } }), (e: TRPCError) => e.code === 'FORBIDDEN');
  assert.equal(await db.prisma.shareLink.count(), 0, 'a refused link is not kept');
  const link = await A.share.create({ scope: 'run', target: { runId } });
  assert.deepEqual(
    (await B.share.list()).map((l) => l.id),
    [],
  );
  assert.deepEqual(
    (await A.share.list()).map((l) => l.id),
    [link.id],
  );
  await assert.rejects(B.share.revoke({ id: link.id }), (e: TRPCError) => e.code === 'FORBIDDEN');
  await assert.rejects(
    B.recipes.save({ spec: { ...spec, note: undefined, seed: 5 } }),
    (e: TRPCError) => e.code === 'FORBIDDEN' && /new name/.test(e.message),
  );
  await seedDefaultRecipes(db);
  await assert.rejects(
    B.recipes.save({ spec: { ...EMBEDDED_ARITH_INPUT, seed: 9 } }),
    (e: TRPCError) => e.code === 'FORBIDDEN' && /built-ins/.test(e.message),
  );
  await B.recipes.save({ spec: { ...spec, name: 'bob-micro' } }); // a copy under a new name is fine
  await A.runs.cancel({ runId });
  const admin = makeCaller({ db, principal: principal('admin') });
  await admin.share.revoke({ id: link.id });
  assert.equal((await admin.share.list()).length, 1);

  // The audit log: who, what, on what, and whether it was allowed.
  const rows = await db.prisma.auditLog.findMany({ orderBy: { id: 'asc' } });
  const line = (r: (typeof rows)[number]) => `${r.email ?? '-'} ${r.action} ${r.ok ? 'ok' : 'refused'}`;
  assert.deepEqual(rows.map(line), [
    'alice@example.com recipes.launch ok',
    'bob@example.com runs.cancel refused',
    'bob@example.com share.create refused',
    'alice@example.com share.create ok',
    'bob@example.com share.revoke refused',
    'bob@example.com recipes.save refused',
    'bob@example.com recipes.save refused',
    'bob@example.com recipes.save ok',
    'alice@example.com runs.cancel ok',
    'admin@test.invalid share.revoke ok',
  ]);
  assert.equal(rows[1]!.target, `runId=${runId}`);
});
