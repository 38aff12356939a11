/**
 * Who may do what (docs/deploying-and-security.md "Users and roles"), as the server decides it and the UI shows it: the roles, each
 * including the ones before it, and the principal, the signed-in user behind a request. Shared by server/auth/
 * (which resolves principals), server/trpc/ (which checks roles) and components/ (the admin panels), so it lives here.
 */
export const ROLES = ['viewer', 'researcher', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export const roleRank = (r: Role): number => ROLES.indexOf(r);

/** The signed-in user behind a request: through a session cookie or an API token (acting with its user's role). */
export interface Principal {
  userId: string;
  email: string;
  role: Role;
  via: 'session' | 'token';
  tokenId?: string;
  sessionId?: string;
}
