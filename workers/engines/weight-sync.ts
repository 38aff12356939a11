/**
 * The reload calls OpenAIEngine makes on each rollout server after the trainer wrote a new weight version
 * (contracts/engine.ts WeightSyncSchema). Each resolves only once that server serves the version, or throws an
 * error naming the server's URL. Only documented endpoints are used:
 *
 *   sglang (SGLang, `toolsmith serve-model`): POST /update_weights_from_disk {model_path, weight_version} answers
 *     {success, message, num_paused_requests} once the load is done (docs.sglang.io "SGLang for RL Systems",
 *     "Update Weights from Disk"); then GET /get_weight_version → {weight_version} (newer SGLang: GET /model_info,
 *     tried when /get_weight_version is 404) is polled until it reports the new label.
 *   vllm: POST /collective_rpc {"method": "reload_weights"} reloads the weights in place from the model path the
 *     server was started with (docs.vllm.ai "Sleep Mode", online serving, VLLM_SERVER_DEV_MODE=1); the caller has
 *     pointed that path (<dir>/current) at the new version first. collective_rpc returns after every worker ran it,
 *     so its 200 is the confirmation (vLLM reports no version label to poll on that path).
 *   vllm-lora: POST /v1/load_lora_adapter {lora_name, lora_path} (docs.vllm.ai "LoRA Adapters", dynamically serving
 *     LoRA adapters; VLLM_ALLOW_RUNTIME_LORA_UPDATING=True), then GET /v1/models is polled until it lists the
 *     adapter; the adapter two versions back is unloaded (POST /v1/unload_lora_adapter), as its folder is deleted.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { WeightSyncMode } from '../../contracts/engine.ts';

export interface ReloadTarget {
  /** Base URL without /v1. */
  url: string;
  apiKey?: string;
  mode: WeightSyncMode;
  /** The served base model id (vllm-lora names its adapters after it). */
  model: string;
  timeoutMs: number;
  pollMs?: number;
}

/** The label a version travels under (SGLang's weight_version is a string). */
export const versionLabel = (v: number): string => String(v);

/** A server's weight_version label as our integer version (null: absent or not one of ours). */
export function parseVersion(x: unknown): number | null {
  if (typeof x === 'number' && Number.isInteger(x) && x >= 0) return x;
  if (typeof x === 'string' && /^\d{1,15}$/.test(x.trim())) return Number(x.trim());
  return null;
}

/** The vLLM adapter name of a version. */
export const adapterName = (model: string, version: number): string => `${model}-v${version}`;

/**
 * Point <dirname(dir)>/current at `dir` in one rename (a symlink swapped over the old one), so that a vLLM server
 * started with --model <root>/current reloads the new version and never sees a half-switched link.
 */
export function pointCurrent(dir: string): string {
  const link = path.join(path.dirname(dir), 'current');
  const tmp = `${link}.tmp-${process.pid}`;
  fs.rmSync(tmp, { force: true });
  fs.symlinkSync(path.basename(dir), tmp);
  fs.renameSync(tmp, link);
  return link;
}

/** Load `dir` as `version` on one server; resolves once it serves it. */
export async function pushWeights(t: ReloadTarget, dir: string, version: number): Promise<void> {
  const deadline = Date.now() + t.timeoutMs;
  if (t.mode === 'sglang') {
    const r = await call(
      t,
      'POST',
      '/update_weights_from_disk',
      { model_path: dir, weight_version: versionLabel(version) },
      deadline,
    );
    if (r.status !== 200 || r.json?.success === false)
      throw new Error(`${t.url}: update_weights_from_disk ${dir} failed: HTTP ${r.status}: ${message(r)}`);
    await poll(t, deadline, `weight version ${version}`, async () => {
      let g = await call(t, 'GET', '/get_weight_version', undefined, deadline);
      if (g.status === 404) g = await call(t, 'GET', '/model_info', undefined, deadline);
      if (g.status !== 200) throw new Error(`${t.url}: get_weight_version: HTTP ${g.status}: ${message(g)}`);
      return {
        ok: g.json?.weight_version === versionLabel(version),
        now: `weight version ${JSON.stringify(g.json?.weight_version ?? null)}`,
      };
    });
  } else if (t.mode === 'vllm') {
    const r = await call(t, 'POST', '/collective_rpc', { method: 'reload_weights' }, deadline);
    if (r.status !== 200)
      throw new Error(
        `${t.url}: collective_rpc reload_weights failed: HTTP ${r.status}: ${message(r)}${r.status === 404 ? ' (start vLLM with VLLM_SERVER_DEV_MODE=1)' : ''}`,
      );
  } else {
    const name = adapterName(t.model, version);
    const r = await call(t, 'POST', '/v1/load_lora_adapter', { lora_name: name, lora_path: dir }, deadline);
    if (r.status !== 200)
      throw new Error(
        `${t.url}: load_lora_adapter ${name} from ${dir} failed: HTTP ${r.status}: ${message(r)}${r.status === 404 ? ' (start vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True)' : ''}`,
      );
    await poll(t, deadline, `adapter ${name} listed`, async () => {
      const g = await call(t, 'GET', '/v1/models', undefined, deadline);
      const ids: string[] = Array.isArray(g.json?.data) ? g.json.data.map((m: { id?: unknown }) => String(m.id)) : [];
      return { ok: ids.includes(name), now: `models ${ids.join(', ') || '(none)'}` };
    });
    // Best effort: the folder of version - 2 is deleted next (two versions are kept).
    if (version >= 2)
      await call(
        t,
        'POST',
        '/v1/unload_lora_adapter',
        { lora_name: adapterName(t.model, version - 2) },
        deadline,
      ).catch(() => {});
  }
}

interface Answer {
  status: number;
  text: string;
  json: any;
}

async function call(
  t: ReloadTarget,
  method: 'GET' | 'POST',
  route: string,
  body: unknown,
  deadline: number,
): Promise<Answer> {
  const left = deadline - Date.now();
  if (left <= 0) throw new Error(`${t.url}: weight reload timed out after ${t.timeoutMs} ms (at ${route})`);
  let res: Response;
  try {
    res = await fetch(`${t.url}${route}`, {
      method,
      signal: AbortSignal.timeout(left),
      headers: {
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(t.apiKey ? { authorization: `Bearer ${t.apiKey}` } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    const err = e as { name?: string; cause?: { code?: string }; message?: string };
    if (err?.name === 'TimeoutError')
      throw new Error(`${t.url}: weight reload timed out after ${t.timeoutMs} ms (at ${route})`);
    throw new Error(`${t.url}: ${route}: ${err?.cause?.code ?? err?.message ?? String(e)}`);
  }
  const text = await res.text();
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, text, json };
}

function message(a: Answer): string {
  const j = a.json;
  if (typeof j?.message === 'string') return j.message;
  if (typeof j?.error?.message === 'string') return j.error.message;
  if (typeof j?.error === 'string') return j.error;
  if (typeof j?.detail === 'string') return j.detail;
  return a.text.slice(0, 300);
}

async function poll(
  t: ReloadTarget,
  deadline: number,
  want: string,
  check: () => Promise<{ ok: boolean; now: string }>,
): Promise<void> {
  let last = '';
  for (;;) {
    const c = await check();
    if (c.ok) return;
    last = c.now;
    if (Date.now() + (t.pollMs ?? 100) > deadline)
      throw new Error(`${t.url}: still not serving ${want} after ${t.timeoutMs} ms (it reports ${last})`);
    await new Promise((r) => setTimeout(r, t.pollMs ?? 100));
  }
}
