export * from './kafka-client';
export * from './event-publisher';
export * from './replaying-subscriber';
export * from './group-subscriber';
export * from './outbox/outbox';
