import fs from 'node:fs';
import path from 'node:path';
import { config } from '../server/config.ts';
import { parseFlags } from './args.ts';
import { UserError } from '../contracts/errors.ts';
import { isLoopback, listenError, serviceAllowedHosts } from './listen.ts';
import { readSecret, refuseSecretFlags, type SecretSource } from './secrets.ts';
import { bindRefusal } from '../contracts/hosts.ts';
import type { Command } from './command.ts';

/** Where the API key comes from: never argv (any local user reads a process's command line). */
const KEY_SOURCE: SecretSource = {
  refused: ['api-key', 'token'],
  env: 'TOOLSMITH_SERVE_API_KEY',
  fileFlag: 'api-key-file',
};

/**
 * `npx toolsmith serve-model --checkpoint DIR`: the embedded ONNX engine behind an OpenAI-compatible server
 * (workers/engines/openai-server.ts). Resolves (0) once SIGTERM/SIGINT has shut it down.
 */
export const serveModelCommand: Command = {
  name: 'serve-model',
  summary: 'serve a trained model (an ONNX export dir) as an OpenAI-compatible server (/v1/models, /v1/completions)',
  usage: `--checkpoint DIR [--port P] [--host H] [--api-key-file FILE] [--allowed-hosts H,H] [--model-name NAME] [--max-batch N] [--threads N] [--weights-root DIR] [--weight-version V]

  DIR is an export dir written by workers/trainer/export_onnx.py (model.onnx, tokenizer.json, config.json).
  Binds 127.0.0.1:8000 by default (--port 0 picks a free port; --host 0.0.0.0 serves other machines).
  The API key (TOOLSMITH_SERVE_API_KEY, or the first line of --api-key-file FILE; never on the command line) makes
  every /v1 route need Authorization: Bearer KEY. The weight-reload route always needs it, and a --host beyond
  loopback refuses to start without one.
  --allowed-hosts H,H: extra Host names clients may use (default: loopback, the bound address; for 0.0.0.0 every
  address of this machine and its host name). Other Hosts get 421; a browser Origin not among them gets 403.
  --model-name sets the model id clients pass (default: the checkpoint dir's name).
  Routes: GET /v1/models, POST /v1/completions (stream, logprobs, stop, seed; vLLM's return_token_ids), GET /health;
  SGLang's weight reload: POST /update_weights_from_disk {model_path, weight_version} (key required), GET /get_weight_version.
  --weights-root DIR: the only folder reloads may load from (default TOOLSMITH_WEIGHT_SYNC_DIR, data/weight-sync).
  --weight-version V: the label of the start-up weights (default 0).
  SIGTERM/SIGINT finish requests in flight (up to 10 s) and stop.`,
  async run(args) {
    refuseSecretFlags(args, KEY_SOURCE);
    const f = parseFlags(args, {
      checkpoint: 'string',
      port: 'number',
      host: 'string',
      'api-key-file': 'string',
      'allowed-hosts': 'string',
      'model-name': 'string',
      'max-batch': 'number',
      threads: 'number',
      'weights-root': 'string',
      'weight-version': 'string',
    });
    const host = typeof f.host === 'string' ? f.host : '127.0.0.1';
    const apiKey = readSecret(f['api-key-file'] as string | undefined, config().serveApiKey, KEY_SOURCE);
    const refused = bindRefusal(host, apiKey !== undefined, {
      service: 'serve-model',
      tokenHow: 'set TOOLSMITH_SERVE_API_KEY or pass --api-key-file FILE',
    });
    if (refused) throw new UserError(refused, { field: '--host' });
    const allowedHosts = serviceAllowedHosts(host, f['allowed-hosts'] as string | undefined);
    if (typeof f.checkpoint !== 'string' || !f.checkpoint)
      throw new UserError('serve-model needs --checkpoint DIR', {
        fix: 'pass an export dir holding model.onnx, tokenizer.json and config.json',
      });
    const dir = path.resolve(f.checkpoint);
    for (const name of ['model.onnx', 'tokenizer.json', 'config.json']) {
      if (!fs.existsSync(path.join(dir, name)))
        throw new UserError(`--checkpoint ${f.checkpoint}: no ${name} there`, {
          fix: 'export one with `python3 workers/trainer/export_onnx.py --out DIR`',
        });
    }
    const port = (f.port as number | undefined) ?? 8000;
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new UserError(`option --port: ${port} is not a port number (0-65535; 0 picks a free one)`);
    for (const k of ['max-batch', 'threads'] as const) {
      const v = f[k] as number | undefined;
      if (v !== undefined && !(Number.isInteger(v) && v > 0))
        throw new UserError(`option --${k}: ${v} is not a positive whole number`);
    }
    const model = typeof f['model-name'] === 'string' && f['model-name'] ? f['model-name'] : path.basename(dir);

    const { OnnxEngine } = await import('../workers/engines/onnx-engine.ts');
    const { OpenAIServer } = await import('../workers/engines/openai-server.ts');
    const engine = await OnnxEngine.load(dir, {
      id: `onnx:${model}`,
      maxBatch: f['max-batch'] as number | undefined,
      threads: f.threads as number | undefined,
    });
    const weightRoots = [
      typeof f['weights-root'] === 'string' && f['weights-root']
        ? path.resolve(f['weights-root'])
        : config().weightSyncDir,
    ];
    const weightVersion = typeof f['weight-version'] === 'string' && f['weight-version'] ? f['weight-version'] : '0';
    const server = new OpenAIServer({ engine, model, apiKey, host, port, weightRoots, weightVersion, allowedHosts });
    let addr;
    try {
      addr = await server.listen();
    } catch (e) {
      await engine.close();
      throw listenError(e, host, port);
    }
    // The stop handlers go in before the line that says it listens: whoever reads that line may signal at once,
    // and a SIGTERM before them would end the process by default, without finishing requests (exit by signal).
    const stopped = new Promise<number>((resolve) => {
      let stopping = false;
      const stop = (signal: string) => {
        if (stopping) {
          console.error(`toolsmith serve-model: second ${signal}, exiting now`);
          process.exit(1);
        }
        stopping = true;
        console.log(`serve-model: ${signal}, finishing requests in flight and stopping`);
        void (async () => {
          await server.close(10000);
          await engine.close();
          process.off('SIGTERM', onTerm);
          process.off('SIGINT', onInt);
          console.log('serve-model stopped');
          resolve(0);
        })();
      };
      const onTerm = () => stop('SIGTERM');
      const onInt = () => stop('SIGINT');
      process.on('SIGTERM', onTerm);
      process.on('SIGINT', onInt);
    });
    console.log(
      `serving model "${model}" on ${addr.url}/v1 (${apiKey ? 'API key required' : 'no API key; weight reloads off'})`,
    );
    if (!isLoopback(host)) {
      console.error(
        'toolsmith serve-model: serving plain HTTP beyond this machine; the API key travels in clear, so keep it on a private network',
      );
    }
    return stopped;
  },
};
