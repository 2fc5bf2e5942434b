/** Test helpers for resource services (integration tier). Not part of the runtime library. */
export * from './resource-test-app';
export * from './resource-contract';
export * from './tcp-proxy';
export * from './owner-stub';
