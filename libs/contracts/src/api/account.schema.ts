import { ALL_SCOPES } from '../scopes';
/** JSON Schemas of the account endpoints; validate requests and document them. */
export const SIGNUP_SCHEMA = {
  $id: 'SignupRequest',
  type: 'object',
  additionalProperties: false,
  required: ['organization_name', 'email', 'password'],
  properties: {
    organization_name: { type: 'string', minLength: 1, maxLength: 200 },
    email: { type: 'string', format: 'email', maxLength: 254 },
    password: { type: 'string', minLength: 12, maxLength: 128 },
  },
} as const;

export const LOGIN_SCHEMA = {
  $id: 'LoginRequest',
  type: 'object',
  additionalProperties: false,
  required: ['email', 'password'],
  properties: {
    email: { type: 'string', maxLength: 254 },
    password: { type: 'string', maxLength: 128 },
  },
} as const;

export const CREATE_API_KEY_SCHEMA = {
  $id: 'CreateApiKeyRequest',
  type: 'object',
  additionalProperties: false,
  required: ['name', 'scopes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    scopes: { type: 'array', minItems: 1, maxItems: ALL_SCOPES.length, uniqueItems: true, items: { type: 'string' } },
    expires_at: {
      type: ['string', 'null'],
      maxLength: 40,
      description: 'RFC 3339 date-time with an offset, in the future and at most one year ahead; absent or null: the key never expires.',
    },
    allowed_ips: {
      type: 'array',
      // 100 is the rule (too_many, per entry errors); this only bounds what the schema check walks.
      maxItems: 1000,
      items: { type: 'string', maxLength: 100 },
      description: 'IPv4/IPv6 addresses or CIDR blocks the key may be used from (at most 100); empty or absent: any address.',
    },
  },
} as const;

export const ROLL_API_KEY_SCHEMA = {
  $id: 'RollApiKeyRequest',
  type: 'object',
  additionalProperties: false,
  required: ['previous_secret_expires_in'],
  properties: {
    previous_secret_expires_in: {
      type: 'integer',
      minimum: 0,
      maximum: 604800,
      description: 'Seconds the previous secret keeps working beside the new one (0 to 604800, seven days); 0 ends it at once.',
    },
    end_sessions: {
      type: 'boolean',
      description: 'Also end every live session of the key at once (its refresh tokens stop working, every resource service refuses its access tokens): for a leaked secret.',
    },
  },
} as const;

/** Fields of a key that PATCH may change; every other field of the key view is fixed for its life. */
export const UPDATE_API_KEY_SCHEMA = {
  $id: 'UpdateApiKeyRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    allowed_ips: {
      ...CREATE_API_KEY_SCHEMA.properties.allowed_ips,
      description:
        'The new allowlist, replacing the old one (at most 100 IPv4/IPv6 addresses or CIDR blocks); empty: any address; absent: unchanged. Applied to the tokens already issued within the revocation bound.',
    },
  },
} as const;

export interface SignupRequest {
  organization_name: string;
  email: string;
  password: string;
}
export interface LoginRequest {
  email: string;
  password: string;
}
export interface CreateApiKeyRequest {
  name: string;
  scopes: string[];
  expires_at?: string | null;
  allowed_ips?: string[];
}
export interface RollApiKeyRequest {
  previous_secret_expires_in: number;
  end_sessions?: boolean;
}
export interface UpdateApiKeyRequest {
  name?: string;
  allowed_ips?: string[];
}
