/**
 * The page renders names typed by users and shows a secret once, so it allows nothing it does not
 * load itself: scripts and styles only from its own origin (no inline code, no `eval`), API calls
 * only to its own origin (the gateway), no framing (clickjacking a "Revoke" button), no plugins.
 * `require-trusted-types-for` makes any string-to-HTML sink (`innerHTML`) throw in the browser: the
 * page builds its DOM with `textContent` only, and this keeps it that way.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
].join('; ');

/** Sent on every response of settings-web, pages, assets, errors and health alike. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Content-Security-Policy': CONTENT_SECURITY_POLICY,
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  // For browsers that predate CSP frame-ancestors.
  'X-Frame-Options': 'DENY',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};
