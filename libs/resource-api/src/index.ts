export * from './validation/json-body';
export * from './pagination/list-query';
export * from './tenancy/org-scope';
export * from './money/arithmetic';
export * from './idempotency/idempotency';
export * from './bootstrap/resource-config';
export * from './bootstrap/resource-service';
export * from './idempotency/send-created';
