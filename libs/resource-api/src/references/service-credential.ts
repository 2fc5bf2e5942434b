import { parsePublicId, ResourceServiceName } from '@invoicing/contracts';
import type { KeyRing } from '@invoicing/auth-guard';
import { randomUUID } from 'node:crypto';
import { createSigner, createVerifier } from 'fast-jwt';

/** The JOSE `typ` of a service credential: never an access token's (`at+jwt`), so neither passes for the other. */
export const SERVICE_TOKEN_TYP = 'svc+jwt';
/** A credential is made per call and used at once: one minute covers clock skew, not reuse. */
export const SERVICE_TOKEN_TTL_SECONDS = 60;

/** What a verified service credential says: who asks, and in which organization it may read. */
export interface ServiceCaller {
  service: string;
  organizationId: string;
  organizationPublicId: string;
}

/**
 * Credentials of one resource service towards another (ADR 0012): an HS256 JWT signed with a key
 * ring only the resource services hold (SERVICE_TOKEN_KEYS, never JWT_KEYS), naming the asking
 * service (`iss`), the owner asked (`aud`) and the one organization the answer is confined to
 * (`org_id`, the organization of the request that needs the object). A tenant's access token is not
 * one, whatever its scopes: an owner's internal route answers only these, and only from the services
 * that reference its objects (`referrersOfKind`).
 */
export class ServiceCredentials {
  private readonly sign: (payload: Record<string, unknown>) => string;
  private readonly verifiers = new Map<string, (token: string) => Record<string, unknown>>();

  constructor(
    ring: KeyRing,
    /** This service: the issuer of what it signs, the audience of what it accepts. */
    private readonly self: ResourceServiceName,
    /** Services whose credentials this one accepts (none: its internal route refuses everyone). */
    private readonly accepted: ReadonlySet<string>,
  ) {
    const kid = ring.signingKid;
    this.sign = createSigner({ key: ring.keys.get(kid)!, algorithm: 'HS256', kid, header: { alg: 'HS256', typ: SERVICE_TOKEN_TYP }, expiresIn: SERVICE_TOKEN_TTL_SECONDS * 1000 });
    for (const [id, key] of ring.keys) {
      this.verifiers.set(
        id,
        createVerifier({
          key,
          algorithms: ['HS256'],
          checkTyp: SERVICE_TOKEN_TYP,
          allowedAud: self,
          requiredClaims: ['iss', 'aud', 'org_id', 'iat', 'exp', 'jti'],
          clockTolerance: 5000,
          // Below the lifetime, verification is rare (only unknown references): nothing to cache.
          cache: false,
        }),
      );
    }
  }

  /** A credential for asking `owner` about an object of `organizationPublicId`. */
  credentialFor(owner: ResourceServiceName, organizationPublicId: string): string {
    return this.sign({ iss: this.self, aud: owner, org_id: organizationPublicId, jti: randomUUID() });
  }

  /** The caller a credential names, or null when it is not one this service accepts. */
  verify(token: string): ServiceCaller | null {
    const kid = kidOf(token);
    const verify = kid === null ? undefined : this.verifiers.get(kid);
    if (!verify) return null;
    let claims: Record<string, unknown>;
    try {
      claims = verify(token);
    } catch {
      return null;
    }
    const { iss, org_id: organizationPublicId, exp, iat } = claims;
    if (typeof iss !== 'string' || !this.accepted.has(iss) || typeof organizationPublicId !== 'string') return null;
    // A credential that claims a longer life than any this platform signs was not signed by it.
    if (typeof exp !== 'number' || typeof iat !== 'number' || exp - iat > SERVICE_TOKEN_TTL_SECONDS) return null;
    const organizationId = parsePublicId('org', organizationPublicId);
    return organizationId ? { service: iss, organizationId, organizationPublicId } : null;
  }
}

function kidOf(token: string): string | null {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot > 512) return null;
  try {
    const header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8')) as { kid?: unknown };
    return typeof header?.kid === 'string' ? header.kid : null;
  } catch {
    return null;
  }
}
