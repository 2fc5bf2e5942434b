import { isPlaceholderSecret } from '@invoicing/service-kit';
import { z } from 'zod';
import { parseKeyRing } from './key-ring';

/**
 * Development key ring: lets `start` and the tests run with no configuration. Its kid says what it
 * is; with NODE_ENV=production a ring containing it (or any placeholder) stops the service.
 */
export const DEV_JWT_KEYS = 'dev-only=ZGV2LW9ubHktc2lnbmluZy1rZXktZG8tbm90LXVzZS1pbi1wcm9kdWN0aW9uIQ';

/** The access-token variables shared by the auth service (signs) and every resource service (verifies). */
export const accessTokenEnvShape = {
  /** `kid=base64url-secret[,kid=secret...]`; each secret at least 32 bytes. */
  JWT_KEYS: z.string().default(DEV_JWT_KEYS),
  /** The kid that signs; defaults to the first of JWT_KEYS. Only the auth service signs. */
  JWT_SIGNING_KID: z.string().optional(),
  JWT_ISSUER: z.string().min(1).default('http://localhost:8080'),
  JWT_AUDIENCE: z.string().min(1).default('invoicing-api'),
};

/** Adds key-ring problems to a zod refinement (use in `.superRefine`). */
export function checkAccessTokenEnv(
  env: { NODE_ENV: string; JWT_KEYS: string; JWT_SIGNING_KID?: string },
  ctx: z.RefinementCtx,
): void {
  try {
    parseKeyRing(env.JWT_KEYS, env.JWT_SIGNING_KID);
  } catch (e) {
    ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['JWT_KEYS'], message: (e as Error).message });
  }
  if (env.NODE_ENV === 'production' && (env.JWT_KEYS === DEV_JWT_KEYS || isPlaceholderSecret(env.JWT_KEYS))) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['JWT_KEYS'],
      message: 'holds the development key ring or a placeholder; set real keys in production',
    });
  }
}
