/**
 * Ray's Jobs REST API (the dashboard, port 8265 by default; docs.ray.io "Ray Jobs REST API"): submit a job, read
 * its status and logs, stop it, list them. Every request carries `Authorization: Bearer <token>` (a cluster started
 * with RAY_AUTH_MODE=token answers 401 without it). `checkAuth` refuses a cluster that answers without a token unless
 * the operator allowed it: whoever reaches such a cluster runs code on it.
 */

import http from 'node:http';
import https from 'node:https';

/** A job's status as Ray reports it. */
export type RayJobStatus = 'PENDING' | 'RUNNING' | 'STOPPED' | 'SUCCEEDED' | 'FAILED';
export const RAY_TERMINAL: ReadonlySet<RayJobStatus> = new Set(['STOPPED', 'SUCCEEDED', 'FAILED']);

export interface RayJobInfo {
  submission_id: string;
  status: RayJobStatus;
  message?: string | null;
  entrypoint?: string;
  metadata?: Record<string, string> | null;
  start_time?: number | null;
  end_time?: number | null;
  driver_exit_code?: number | null;
}

export interface RayJobSubmission {
  entrypoint: string;
  submission_id: string;
  /** working_dir / env_vars: what the entrypoint runs with (env_vars hold no secret a dashboard reader must not see). */
  runtime_env?: { env_vars?: Record<string, string>; working_dir?: string };
  metadata?: Record<string, string>;
  entrypoint_num_cpus?: number;
}

export class RayJobsError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    /** The head took the connection but sent no answer in time: busy or hung, not gone (a gone head refuses). */
    readonly busy = false,
  ) {
    super(message);
    this.name = 'RayJobsError';
  }
}

export class RayJobsClient {
  constructor(
    /** The dashboard's base URL, e.g. http://head:8265. */
    readonly address: string,
    private readonly token: string | undefined,
    private readonly timeoutMs = 15_000,
  ) {}

  private async request<T>(method: string, route: string, body?: unknown, auth = true): Promise<T> {
    const headers: Record<string, string> = {};
    if (auth && this.token) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res: { status: number; text: string };
    try {
      res = await httpRequest(new URL(`${this.address}${route}`), method, headers, body, this.timeoutMs);
    } catch (e) {
      throw new RayJobsError(
        `the Ray cluster at ${this.address} cannot be reached: ${(e as Error).message}`,
        undefined,
        e instanceof NoAnswer,
      );
    }
    const text = res.text;
    if (res.status < 200 || res.status >= 300) {
      const why =
        res.status === 401 || res.status === 403
          ? 'the cluster refused the token (TOOLSMITH_RAY_TOKEN_FILE must hold the token of its RAY_AUTH_MODE=token)'
          : text.slice(0, 500);
      throw new RayJobsError(`Ray ${method} ${route}: HTTP ${res.status}: ${why}`, res.status);
    }
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new RayJobsError(`Ray ${method} ${route}: not JSON: ${text.slice(0, 200)}`);
    }
  }

  /** Refuse a cluster whose Jobs API answers without a token, unless allowNoAuth. */
  async checkAuth(allowNoAuth: boolean): Promise<void> {
    let open = false;
    try {
      await this.request('GET', '/api/jobs/', undefined, false);
      open = true;
    } catch (e) {
      if (!(e instanceof RayJobsError) || e.status !== 401) throw e;
    }
    if (open && !allowNoAuth)
      throw new RayJobsError(
        `the Ray cluster at ${this.address} accepts jobs without a token: anyone who reaches it runs code there. Start it with RAY_AUTH_MODE=token (docs/scaling-out.md "Ray"), or set TOOLSMITH_RAY_ALLOW_NO_AUTH=1 to accept that`,
      );
    if (!this.token && !open)
      throw new RayJobsError(
        `the Ray cluster at ${this.address} needs a token: set TOOLSMITH_RAY_TOKEN_FILE to a file holding it`,
      );
  }

  async submit(job: RayJobSubmission): Promise<string> {
    const r = await this.request<{ submission_id?: string; job_id?: string }>('POST', '/api/jobs/', job);
    return r.submission_id ?? job.submission_id;
  }

  status(id: string): Promise<RayJobInfo> {
    return this.request<RayJobInfo>('GET', `/api/jobs/${encodeURIComponent(id)}`);
  }

  async logs(id: string): Promise<string> {
    return (await this.request<{ logs?: string }>('GET', `/api/jobs/${encodeURIComponent(id)}/logs`)).logs ?? '';
  }

  async stop(id: string): Promise<boolean> {
    return (
      (await this.request<{ stopped?: boolean }>('POST', `/api/jobs/${encodeURIComponent(id)}/stop`)).stopped ?? false
    );
  }

  list(): Promise<RayJobInfo[]> {
    return this.request<RayJobInfo[]>('GET', '/api/jobs/');
  }
}

/** A request whose connection was made but which got no answer in time. */
class NoAnswer extends Error {}

/**
 * One request with node:http, not fetch: Ray's dashboard refuses POSTs that carry the Sec-Fetch-* headers fetch adds
 * ("method not allowed for browser traffic", its defence against cross-site requests).
 */
function httpRequest(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: unknown,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  if (data) headers['content-length'] = String(data.length);
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = lib.request(url, { method, headers, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    // Whether the connection was made tells a busy head (it takes connections, answers late) from a gone one.
    let connected = false;
    req.on('socket', (sock) => {
      if (!sock.connecting) connected = true;
      else sock.once('connect', () => (connected = true));
    });
    req.on('timeout', () =>
      req.destroy(
        connected
          ? new NoAnswer(`connected, but no answer within ${timeoutMs} ms`)
          : new Error(`no connection within ${timeoutMs} ms`),
      ),
    );
    req.on('error', reject);
    req.end(data);
  });
}
