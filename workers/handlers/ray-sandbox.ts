import crypto from 'node:crypto';
import type { ClusterService } from '../../contracts/cluster.ts';
import { RayServices, type ServiceInfo } from '../cluster/ray-services.ts';
import { RemoteSandbox } from '../sandbox/remote.ts';
import type { Sandbox } from '../sandbox/types.ts';
import { trainerPython } from '../trainer/python.ts';
import { CLI_ENTRIES, TOOLSMITH_BIN } from './cli-entries.ts';

export interface RaySandbox extends Sandbox {
  readonly services: RayServices;
  /** The client over the nodes (its status() shows each node's calls and failures). */
  readonly client: RemoteSandbox;
}

/**
 * A run's sandbox on a Ray cluster: one `toolsmith sandbox serve` per CPU node (nodes offering the custom resource
 * `toolsmith_sandbox` when any does; its pool sized to the node's cores) as Ray actors, with a token made for this run
 * (it reaches the actors through the environment, never argv), and the remote client over whatever nodes serve now:
 * a node that dies is restarted by Ray on its node and rejoins under its new address; the client's retries answer
 * each call once meanwhile.
 */
export async function startRaySandbox(
  runId: string,
  onChange: (services: ClusterService[]) => void = () => {},
): Promise<RaySandbox> {
  const token = crypto.randomBytes(32).toString('hex');
  const services = await RayServices.start(
    trainerPython(),
    {
      name: 'sandbox',
      argv: [process.execPath, TOOLSMITH_BIN, CLI_ENTRIES.sandbox, 'serve', '--host', '{host}', '--port', '0'],
      secretEnv: 'TOOLSMITH_SANDBOX_TOKEN',
      resource: 'toolsmith_sandbox',
      sizeToCores: '--size',
      namespace: `toolsmith-${runId}`,
    },
    { ...process.env, TOOLSMITH_SANDBOX_TOKEN: token },
  );
  const remote = new RemoteSandbox({ urls: services.urls, token, log: () => {} });
  const describe = (list: ServiceInfo[]): ClusterService[] =>
    list.map((s) => ({ kind: 'sandbox', url: s.url, node: s.node, address: s.address, restarts: s.restarts }));
  services.onChange((list) => {
    remote.setNodes(list.map((s) => s.url));
    onChange(describe(list));
  });
  onChange(describe(services.services));
  return {
    services,
    client: remote,
    run: (call, opts) => remote.run(call, opts),
    runBatch: (calls, opts) => remote.runBatch(calls, opts),
    async close() {
      await remote.close();
      await services.close();
    },
  };
}
