export * from './scopes';
export * from './ids';
export * from './access-token';
export * from './events/revocation-events';
export * from './platform';
export * from './api';
export * from './events/domain-events';
export * from './openapi/openapi-document';
