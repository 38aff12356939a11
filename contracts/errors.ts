/**
 * The user-facing error shape: one line saying what is wrong (naming the field) and how to fix it. Entry points
 * print `message` (never a stack) and exit non-zero; tRPC turns it into a BAD_REQUEST with the same text.
 * Client-safe: the browser shows the same shape.
 */
export interface UserErrorShape {
  message: string;
  /** Dotted path of the field the error is about ("stages.1.keep"), when there is one. */
  field?: string;
  fix?: string;
}

export class UserError extends Error implements UserErrorShape {
  readonly fix?: string;
  readonly field?: string;
  constructor(message: string, opts: { fix?: string; field?: string } = {}) {
    super(opts.fix ? `${message} — ${opts.fix}` : message);
    this.name = 'UserError';
    this.fix = opts.fix;
    this.field = opts.field;
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Zod issues as one line naming each field path and the reason ("k: Too small: expected number to be >=1; …"). */
export function zodIssuesText(issues: { path: PropertyKey[]; message: string }[], prefix = ''): string {
  return issues
    .map((i) => `${[prefix, ...i.path.map(String)].filter(Boolean).join('.') || '(input)'}: ${i.message}`)
    .join('; ');
}

/** Validate user input with a zod schema; a failure is a UserError naming the fields and reasons. */
export function parseUserInput<T>(
  schema: {
    safeParse(
      v: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  value: unknown,
  label = '',
): T {
  const r = schema.safeParse(value);
  if (!r.success) throw new UserError(`${label ? `${label}: ` : ''}${zodIssuesText(r.error.issues)}`);
  return r.data;
}
