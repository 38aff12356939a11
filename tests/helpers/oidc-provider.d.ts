// oidc-provider ships no types; the auth test uses a handful of its options.
declare module 'oidc-provider';
