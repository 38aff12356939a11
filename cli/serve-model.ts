import fs from 'node:fs';
import path from 'node:path';
import { config } from '../server/config.ts';
import { parseFlags } from './args.ts';
import { UserError } from '../contracts/errors.ts';
import { isLoopback, listenError } from './listen.ts';
import type { Command } from './commands.ts';

/**
 * `npx toolsmith serve-model --checkpoint DIR`: the embedded ONNX engine behind an OpenAI-compatible server
 * (workers/engines/openai-server.ts). Resolves (0) once SIGTERM/SIGINT has shut it down.
 */
export const serveModelCommand: Command = {
  name: 'serve-model',
  summary: 'serve a trained model (an ONNX export dir) as an OpenAI-compatible server (/v1/models, /v1/completions)',
  usage: `--checkpoint DIR [--port P] [--host H] [--api-key K] [--model-name NAME] [--max-batch N] [--threads N] [--weights-root DIR] [--weight-version V]

  DIR is an export dir written by workers/trainer/export_onnx.py (model.onnx, tokenizer.json, config.json).
  Binds 127.0.0.1:8000 by default (--port 0 picks a free port; --host 0.0.0.0 serves other machines).
  --api-key K (or TOOLSMITH_SERVE_API_KEY) makes every /v1 route need Authorization: Bearer K.
  --model-name sets the model id clients pass (default: the checkpoint dir's name).
  Routes: GET /v1/models, POST /v1/completions (stream, logprobs, stop, seed; vLLM's return_token_ids), GET /health;
  SGLang's weight reload: POST /update_weights_from_disk {model_path, weight_version}, GET /get_weight_version.
  --weights-root DIR: the only folder reloads may load from (default TOOLSMITH_WEIGHT_SYNC_DIR, data/weight-sync).
  --weight-version V: the label of the start-up weights (default 0).
  SIGTERM/SIGINT finish requests in flight (up to 10 s) and stop.`,
  async run(args) {
    const f = parseFlags(args, { checkpoint: 'string', port: 'number', host: 'string', 'api-key': 'string', 'model-name': 'string', 'max-batch': 'number', threads: 'number', 'weights-root': 'string', 'weight-version': 'string' });
    if (typeof f.checkpoint !== 'string' || !f.checkpoint) throw new UserError('serve-model needs --checkpoint DIR', { fix: 'pass an export dir holding model.onnx, tokenizer.json and config.json' });
    const dir = path.resolve(f.checkpoint);
    for (const name of ['model.onnx', 'tokenizer.json', 'config.json']) {
      if (!fs.existsSync(path.join(dir, name))) throw new UserError(`--checkpoint ${f.checkpoint}: no ${name} there`, { fix: 'export one with `python3 workers/trainer/export_onnx.py --out DIR`' });
    }
    const port = (f.port as number | undefined) ?? 8000;
    if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UserError(`option --port: ${port} is not a port number (0-65535; 0 picks a free one)`);
    for (const k of ['max-batch', 'threads'] as const) {
      const v = f[k] as number | undefined;
      if (v !== undefined && !(Number.isInteger(v) && v > 0)) throw new UserError(`option --${k}: ${v} is not a positive whole number`);
    }
    const host = typeof f.host === 'string' ? f.host : '127.0.0.1';
    const apiKey = (typeof f['api-key'] === 'string' ? f['api-key'] : config().serveApiKey ?? '').trim() || undefined;
    const model = typeof f['model-name'] === 'string' && f['model-name'] ? f['model-name'] : path.basename(dir);

    const { OnnxEngine } = await import('../workers/engines/onnx-engine.ts');
    const { OpenAIServer } = await import('../workers/engines/openai-server.ts');
    const engine = await OnnxEngine.load(dir, { id: `onnx:${model}`, maxBatch: f['max-batch'] as number | undefined, threads: f.threads as number | undefined });
    const weightRoots = [typeof f['weights-root'] === 'string' && f['weights-root'] ? path.resolve(f['weights-root']) : config().weightSyncDir];
    const weightVersion = typeof f['weight-version'] === 'string' && f['weight-version'] ? f['weight-version'] : '0';
    const server = new OpenAIServer({ engine, model, apiKey, host, port, weightRoots, weightVersion });
    let addr;
    try {
      addr = await server.listen();
    } catch (e) {
      await engine.close();
      throw listenError(e, host, port);
    }
    console.log(`serving model "${model}" on ${addr.url}/v1 (${apiKey ? 'API key required' : 'no API key'})`);
    if (!isLoopback(host)) {
      console.error(`toolsmith serve-model: serving plain HTTP beyond this machine${apiKey ? '; the API key travels in clear' : ' without an API key'}, so keep it on a private network`);
    }

    return new Promise<number>((resolve) => {
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
  },
};
