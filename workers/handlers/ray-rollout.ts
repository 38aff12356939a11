import crypto from 'node:crypto';
import path from 'node:path';
import type { ClusterService } from '../../contracts/cluster.ts';
import type { WeightSyncMode } from '../../contracts/engine.ts';
import type { Recipe } from '../../contracts/recipe.ts';
import { RayServices, type RayServiceSpec, type ServiceInfo } from '../cluster/ray-services.ts';
import type { PolicyEngine, PolicyEngineFactory } from '../engines/types.ts';
import { trainerPython } from '../trainer/python.ts';
import { CLI_ENTRIES, TOOLSMITH_BIN } from './cli-entries.ts';

const SGLANG_LAUNCH = path.resolve(import.meta.dirname, '../cluster/sglang_launch.py');
type RayEngine = Extract<Recipe['engine'], { kind: 'ray' }>;

/** How each server's weights are pushed (workers/engines/weight-sync.ts) and whether it needs the ONNX export. */
export function raySyncMode(server: RayEngine['server']): { mode: WeightSyncMode; onnx: boolean } {
  if (server === 'vllm') return { mode: 'vllm', onnx: false };
  return { mode: 'sglang', onnx: server === 'serve-model' }; // serve-model speaks SGLang's reload route
}

/**
 * Each server's command line, as its project documents it. `dir` is the first weight version (HF model; with
 * serve-model its ONNX export in dir/onnx), `root` the run's weight-sync folder; "{host}" and "{port}" are filled in
 * on the node. The API key travels in the environment (secretEnv), never argv: serve-model reads
 * TOOLSMITH_SERVE_API_KEY, vLLM VLLM_API_KEY; SGLang takes a key only as --api-key, so workers/cluster/sglang_launch.py
 * reads TOOLSMITH_SGLANG_API_KEY and hands it to SGLang inside its own process (argv is readable by every user).
 */
export function rayServerSpec(e: RayEngine, dir: string, root: string, runId: string): RayServiceSpec {
  const common = { maxNodes: e.replicas, namespace: `toolsmith-${runId}`, startTimeoutS: 600 };
  if (e.server === 'serve-model')
    return {
      ...common,
      name: 'rollout',
      argv: [
        process.execPath,
        TOOLSMITH_BIN,
        CLI_ENTRIES.serveModel,
        '--checkpoint',
        path.join(dir, 'onnx'),
        '--host',
        '{host}',
        '--port',
        '0',
        '--weights-root',
        root,
        '--model-name',
        'policy',
      ],
      secretEnv: 'TOOLSMITH_SERVE_API_KEY',
      startTimeoutS: 120,
    };
  if (e.server === 'sglang')
    return {
      ...common,
      name: 'rollout',
      gpuNodes: true,
      gpus: e.gpusPerServer,
      // docs.sglang.io "Server Arguments"; weight reloads through /update_weights_from_disk.
      argv: [
        'python',
        SGLANG_LAUNCH,
        '--model-path',
        dir,
        '--served-model-name',
        'policy',
        '--host',
        '{host}',
        '--port',
        '{port}',
        '--tp-size',
        String(Math.max(1, e.gpusPerServer)),
      ],
      secretEnv: 'TOOLSMITH_SGLANG_API_KEY',
      healthPath: '/health',
    };
  return {
    ...common,
    name: 'rollout',
    gpuNodes: true,
    gpus: e.gpusPerServer,
    // docs.vllm.ai "vllm serve"; VLLM_SERVER_DEV_MODE=1 enables /collective_rpc reload_weights on the `current` link.
    argv: [
      'vllm',
      'serve',
      path.join(root, 'current'),
      '--served-model-name',
      'policy',
      '--host',
      '{host}',
      '--port',
      '{port}',
      '--tensor-parallel-size',
      String(Math.max(1, e.gpusPerServer)),
    ],
    env: { VLLM_SERVER_DEV_MODE: '1' },
    secretEnv: 'VLLM_API_KEY',
    healthPath: '/health',
  };
}

/**
 * The policy's engine for `engine.kind: "ray"`: on the trainer's first weight export the run's rollout servers start
 * as Ray actors (rayServerSpec), with an API key made for this run, and an OpenAIEngine spreads requests over
 * whichever serve now (a server Ray restarts rejoins under its new address and is brought up to date by the next
 * push). Closing the engine ends the servers.
 */
export function rayPolicy(
  e: RayEngine,
  root: string,
  runId: string,
  onChange: (services: ClusterService[]) => void = () => {},
): PolicyEngineFactory {
  const sync = raySyncMode(e.server);
  const create = async (dir: string): Promise<PolicyEngine> => {
    const key = crypto.randomBytes(32).toString('hex');
    const spec = rayServerSpec(e, dir, root, runId);
    const services = await RayServices.start(trainerPython(), spec, {
      ...process.env,
      ...(spec.secretEnv ? { [spec.secretEnv]: key } : {}),
    });
    const describe = (list: ServiceInfo[]): ClusterService[] =>
      list.map((s) => ({ kind: 'rollout', url: s.url, node: s.node, address: s.address, restarts: s.restarts }));
    const { OpenAIEngine } = await import('../engines/openai-engine.ts');
    const engine = new OpenAIEngine({
      baseUrls: services.urls,
      model: 'policy',
      apiKey: key,
      totalTokens: e.totalTokens,
      timeoutMs: e.timeoutMs,
      retries: 2,
      weightSync: { mode: sync.mode, timeoutMs: e.syncTimeoutMs },
    });
    services.onChange((list) => {
      engine.setBaseUrls(list.map((s) => s.url));
      onChange(describe(list));
    });
    onChange(describe(services.services));
    try {
      await engine.load(dir);
    } catch (err) {
      await services.close();
      throw err;
    }
    const close = engine.close.bind(engine);
    engine.close = async () => {
      await close();
      await services.close();
    };
    return engine;
  };
  return Object.assign(create, { versions: { root, mode: sync.mode, onnx: sync.onnx } });
}
