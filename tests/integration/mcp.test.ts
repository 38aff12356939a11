// The agent API (`npx toolsmith mcp`): the MCP SDK's own client, over stdio (the CLI started as an agent starts it,
// its token in TOOLSMITH_TOKEN) and over streamable HTTP (a bearer token per request), lists runs, reads metrics,
// searches trajectories by text, verdict, reward and tool error, opens one and cites it as a link; every tool is
// read-only; no token, an unknown one or a revoked one gets nothing, and a revocation holds at the next call.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Database } from '../../server/db/client.ts';
import { createToken, revokeToken } from '../../server/auth/tokens.ts';
import { createUser } from '../../server/auth/users.ts';
import { serveMcpHttp } from '../../server/mcp/serve.ts';
import { insertMetricPoints } from '../../server/store/metrics.ts';
import { createRun } from '../../server/store/runs.ts';
import { insertTrajectories } from '../../server/store/trajectories.ts';
import { appendEvent } from '../../server/store/events.ts';
import { freshDatabase } from '../helpers/db.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const PUBLIC = 'http://workbench.test:3000';
let fresh: Awaited<ReturnType<typeof freshDatabase>>;
let db: Database;
let runId = '';
let token = '';
let tokenId = '';

const trajectory = (id: string, reward: number, toolErrors: number, text: string) => ({
  id,
  runId,
  step: 2,
  stage: 0,
  groupId: 'g1',
  sampleIndex: Number(id.slice(-1)),
  reward,
  correct: reward > 0,
  finishReason: 'stop',
  answer: String(reward),
  toolErrors,
  content: { prompt: text, turns: [{ role: 'assistant', text: `${text} …` }] },
  toolCalls: [],
});

before(async () => {
  fresh = await freshDatabase();
  db = fresh.db;
  await createUser(db, { email: 'agent@lab.test', role: 'viewer' });
  ({ token, id: tokenId } = await createToken(db, { email: 'agent@lab.test', scope: 'read' }));
  runId = (await createRun(db, { name: 'gsm-tool', kind: 'train', recipeSpec: {} })).id;
  await insertMetricPoints(db, [
    { runId, key: 'reward/mean', step: 1, value: 0.25 },
    { runId, key: 'reward/mean', step: 2, value: 0.5 },
  ]);
  await insertTrajectories(db, [
    trajectory('tr_mcp1', 1, 0, 'Natalia sold clips'),
    trajectory('tr_mcp2', 0, 1, 'Weng earns per hour'),
    trajectory('tr_mcp3', 0, 0, 'Natalia again'),
  ]);
  const at = 1_800_000_000_000;
  await appendEvent(db, runId, {
    message: 'step 2',
    type: 'step',
    data: {
      step: 2,
      metrics: {},
      phases: [
        { name: 'train', start: at, end: at + 1000 },
        { name: 'sync', start: at + 1300, end: at + 1500 },
      ],
    },
  });
});
after(async () => {
  await fresh.close();
});

const json = (r: unknown) => JSON.parse(((r as CallToolResult).content[0] as { text: string }).text);

/** The same questions through either transport. */
async function asAnAgent(client: Client) {
  const tools = (await client.listTools()).tools;
  assert.deepEqual(tools.map((t) => t.name).sort(), [
    'cite_trajectory',
    'list_runs',
    'open_trajectory',
    'read_metrics',
    'search_trajectories',
    'step_timeline',
  ]);
  for (const t of tools) assert.equal(t.annotations?.readOnlyHint, true, `${t.name} is read-only`);

  const runs = json(await client.callTool({ name: 'list_runs', arguments: {} }));
  assert.deepEqual(
    runs.map((r: { id: string; name: string; link: string }) => [r.id, r.name, r.link]),
    [[runId, 'gsm-tool', `${PUBLIC}/runs/${runId}`]],
  );
  assert.deepEqual(json(await client.callTool({ name: 'read_metrics', arguments: { runId } })).keys, ['reward/mean']);
  assert.deepEqual(
    json(await client.callTool({ name: 'read_metrics', arguments: { runId, keys: ['reward/mean'] } })).series,
    {
      'reward/mean': [
        [1, 0.25],
        [2, 0.5],
      ],
    },
  );

  // The step's timeline: these stored turns kept no times, so only the recorded phases make it.
  const timeline = json(await client.callTool({ name: 'step_timeline', arguments: { runId, step: 2 } }));
  assert.deepEqual(
    [timeline.wallMs, timeline.trajectories, timeline.untimed, timeline.phasesRecorded, timeline.msByKind],
    [1500, 3, 3, true, { train: 1000, sync: 200 }],
  );
  assert.deepEqual(
    timeline.criticalPath.map((b: { block: string; atMs: number; ms: number }) => [b.block, b.atMs, b.ms]),
    [
      ['train', 0, 1000],
      ['sync', 1300, 200],
    ],
  );
  const unknownRun = (await client.callTool({
    name: 'step_timeline',
    arguments: { runId: 'run_nope', step: 1 },
  })) as CallToolResult;
  assert.equal(unknownRun.isError, true);

  const search = async (args: Record<string, unknown>) =>
    json(await client.callTool({ name: 'search_trajectories', arguments: { runId, ...args } })).items.map(
      (t: { id: string }) => t.id,
    );
  assert.deepEqual(await search({ text: 'natalia' }), ['tr_mcp1', 'tr_mcp3']);
  assert.deepEqual(await search({ correct: false }), ['tr_mcp2', 'tr_mcp3']);
  assert.deepEqual(await search({ minReward: 0.5 }), ['tr_mcp1']);
  assert.deepEqual(await search({ toolError: true }), ['tr_mcp2']);
  assert.deepEqual(await search({ text: 'natalia', correct: false }), ['tr_mcp3']);

  const opened = json(await client.callTool({ name: 'open_trajectory', arguments: { id: 'tr_mcp2' } }));
  assert.equal(opened.content.prompt, 'Weng earns per hour');
  assert.equal(opened.toolErrors, 1);
  const cited = json(await client.callTool({ name: 'cite_trajectory', arguments: { id: 'tr_mcp1' } }));
  assert.equal(cited.link, `${PUBLIC}/trajectories/tr_mcp1`);
  assert.match(
    cited.markdown,
    /^\[trajectory tr_mcp1 \(run .+, step 2, reward 1\)\]\(http:\/\/workbench\.test:3000\/trajectories\/tr_mcp1\)$/,
  );

  const missing = (await client.callTool({ name: 'open_trajectory', arguments: { id: 'nope' } })) as CallToolResult;
  assert.equal(missing.isError, true);
  assert.match((missing.content[0] as { text: string }).text, /trajectory nope not found/);
}

const stdioEnv = (t: string | undefined) => {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && k !== 'TOOLSMITH_TOKEN') env[k] = v;
  return { ...env, DATABASE_URL: fresh.url, TOOLSMITH_PUBLIC_URL: PUBLIC, ...(t ? { TOOLSMITH_TOKEN: t } : {}) };
};
const stdio = (t: string | undefined) =>
  new StdioClientTransport({
    command: process.execPath,
    args: [path.join(ROOT, 'bin/toolsmith.mjs'), 'mcp'],
    env: stdioEnv(t),
    cwd: ROOT,
    stderr: 'pipe',
  });

test('stdio: an agent lists runs, reads metrics, searches, opens and cites trajectories as its token’s user', async () => {
  const client = new Client({ name: 'toolsmith-test', version: '1' });
  await client.connect(stdio(token));
  try {
    await asAnAgent(client);
  } finally {
    await client.close();
  }
});

test('stdio: without a token, or with an unknown one, the server refuses to start and says why', async () => {
  for (const [t, why] of [
    [undefined, /no API token: set TOOLSMITH_TOKEN/],
    ['tsk_not_a_token', /unknown, revoked or expired/],
  ] as const) {
    const transport = stdio(t);
    let err = '';
    transport.stderr?.on('data', (d) => {
      err += String(d);
    });
    const client = new Client({ name: 'toolsmith-test', version: '1' });
    await assert.rejects(client.connect(transport));
    await client.close().catch(() => {});
    assert.match(err, why);
  }
});

test('HTTP: the same answers with a bearer token; none, an unknown or a revoked token gets 401, and a revocation holds at the next request', async () => {
  const server = await serveMcpHttp({ db, publicUrl: PUBLIC, version: 'test' }, { host: '127.0.0.1', port: 0 });
  const { port } = server.address() as { port: number };
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  const connect = async (t: string | null) => {
    const client = new Client({ name: 'toolsmith-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(url, t ? { requestInit: { headers: { authorization: `Bearer ${t}` } } } : {}),
    );
    return client;
  };
  try {
    const client = await connect(token);
    await asAnAgent(client);
    for (const t of [null, 'tsk_not_a_token']) await assert.rejects(connect(t), /401|Unauthorized|token/i);
    const r = await fetch(url, { method: 'GET', headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 405, 'no sessions, so no server stream');

    const second = await connect(token);
    await revokeToken(db, tokenId);
    await assert.rejects(second.callTool({ name: 'list_runs', arguments: {} }), /401|unknown, revoked or expired/);
    await assert.rejects(connect(token), /401|Unauthorized|token/i);
    await client.close();
    await second.close().catch(() => {});
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
