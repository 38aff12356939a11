/**
 * One sandbox session's calls run one at a time, in the order they were made (a call sees what the one before it
 * left), then its close. Shared by the pool's sessions (sessions.ts) and a sandbox node's (remote-session.ts).
 */
export class SerialTurns {
  private last: Promise<unknown> = Promise.resolve();

  /** `task` once every earlier one has settled; a failed turn does not stop the ones after it. */
  run<T>(task: () => Promise<T>): Promise<T> {
    const next = this.last.then(task);
    this.last = next.catch(() => {});
    return next;
  }
}
