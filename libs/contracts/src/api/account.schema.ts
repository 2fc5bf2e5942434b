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
    scopes: { type: 'array', minItems: 1, maxItems: 10, uniqueItems: true, items: { type: 'string' } },
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
}
