/** scripts/netns.mjs: a command inside a network namespace of its own with loopback alone (unshare -n). */
export function inLoopbackNamespace(cmd: string, args: string[]): [string, string[]];
