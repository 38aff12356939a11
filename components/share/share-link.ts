/** A new share link's URL on this origin and the dialog's expiry choices. Pure. */

export const EXPIRY_OPTIONS = [
  { value: 'none', label: 'Never expires', seconds: undefined },
  { value: '1d', label: '1 day', seconds: 24 * 3600 },
  { value: '7d', label: '7 days', seconds: 7 * 24 * 3600 },
  { value: '30d', label: '30 days', seconds: 30 * 24 * 3600 },
] as const;
export type ExpiryChoice = (typeof EXPIRY_OPTIONS)[number]['value'];

export function expirySeconds(choice: string): number | undefined {
  return EXPIRY_OPTIONS.find((o) => o.value === choice)?.seconds;
}

/** The full URL of a share path on this origin, without a doubled slash. */
export function shareUrl(origin: string, path: string): string {
  return `${origin.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
