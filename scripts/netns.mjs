/**
 * A command run inside a network namespace of its own with loopback alone (unshare -n, root): what the Ray tests and
 * bench:cluster run in, so that the Ray cluster they start registers as 127.0.0.1 and nothing of it is reachable
 * from outside. Returns [command, args] for spawn.
 */
export function inLoopbackNamespace(cmd, args) {
  return ['unshare', ['--net', '--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', cmd, ...args]];
}
