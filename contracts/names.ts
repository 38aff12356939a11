/** What a stored name (recipe, dataset) may be: it appears in URLs, CLI arguments and file names. */
export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
export const NAME_RULE = 'use 1-100 letters, digits, ".", "_" or "-", starting with a letter or digit';
