/**
 * Why a sign-in was refused, by the code the server sends (`?error=` on a redirect back to /sign-in, or a 403's
 * `code`): the sign-in page shows the sentence. Shared by server/auth/access-policy.ts and app/sign-in/page.tsx, so it lives in contracts/.
 */
export const SIGN_IN_ERRORS = {
  account_disabled: 'This account is disabled. Ask an admin to enable it (npx toolsmith user enable EMAIL).',
  account_not_linked:
    'An account with this email already exists and is not linked to single sign-on. Ask an admin for a one-time sign-in link, or to turn on TOOLSMITH_OIDC_LINK_BY_EMAIL.',
  oidc_link_refused:
    "Single sign-on may not attach to this account (an admin's, or one that is disabled). Sign in the way you usually do.",
  email_domain_not_allowed: "Single sign-on is not open to this email's domain here (TOOLSMITH_OIDC_ALLOWED_DOMAINS).",
} as const;
export type SignInErrorCode = keyof typeof SIGN_IN_ERRORS;

/** The sentence for a refusal code from the URL (Better Auth's own codes, e.g. INVALID_TOKEN, get a generic one). */
export function signInErrorText(code: string | null): string | null {
  if (!code) return null;
  if (Object.hasOwn(SIGN_IN_ERRORS, code)) return SIGN_IN_ERRORS[code as SignInErrorCode];
  if (/^invalid_token$/i.test(code))
    return 'That sign-in link is used up or expired. Ask an admin for a new one (npx toolsmith user reset-link EMAIL).';
  return `Sign-in failed (${code.slice(0, 60)}).`;
}
