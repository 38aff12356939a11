/**
 * Who may do what (docs/deploying-and-security.md "Users and roles"), as the server decides it and the UI shows it: the roles, each
 * including the ones before it, and the principal, the signed-in user behind a request. Shared by server/auth/
 * (which resolves principals), server/trpc/ (which checks roles) and components/ (the admin panels), so it lives here.
 */
export const ROLES = ['viewer', 'researcher', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export const roleRank = (r: Role): number => ROLES.indexOf(r);

/**
 * An API token's scope: `read` (runs, metrics, trajectories, exports: what a viewer may do), `write`
 * (recipes, launches, imports: a researcher's), `admin`. A token acts with the lower of its scope's role and its
 * user's current role, so every procedure's and route's role check is also its scope check, in one place.
 */
export const TOKEN_SCOPES = ['read', 'write', 'admin'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];
export const isTokenScope = (s: unknown): s is TokenScope => (TOKEN_SCOPES as readonly unknown[]).includes(s);
/** The role a scope acts as at most. */
export const SCOPE_ROLE: Record<TokenScope, Role> = { read: 'viewer', write: 'researcher', admin: 'admin' };
/** The scope that can do all a role can (what tokens from before scopes became: migration 0008). */
export const scopeOfRole = (role: Role): TokenScope => TOKEN_SCOPES.find((s) => SCOPE_ROLE[s] === role) ?? 'read';
/** The role a token acts with: the lower of its user's and its scope's (an unknown stored scope reads as `read`). */
export function tokenRole(userRole: Role, scope: string): Role {
  const capped = SCOPE_ROLE[isTokenScope(scope) ? scope : 'read'];
  return roleRank(capped) < roleRank(userRole) ? capped : userRole;
}

/** The signed-in user behind a request: through a session cookie or an API token (acting with tokenRole). */
export interface Principal {
  userId: string;
  email: string;
  role: Role;
  via: 'session' | 'token';
  tokenId?: string;
  /** A token's scope (its role above is already capped by it). */
  scope?: TokenScope;
  sessionId?: string;
}
