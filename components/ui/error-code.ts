/** A tRPC error's code, if it has one. */
export const errorCode = (e: unknown): string | undefined => (e as { data?: { code?: string } } | null)?.data?.code;
