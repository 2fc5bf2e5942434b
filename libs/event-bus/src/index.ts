export * from './kafka-client';
export * from './event-publisher';
export * from './replaying-subscriber';
export * from './group-subscriber';
export * from './outbox/outbox';
export * from './nest/kafka-event-client';
export * from './nest/kafka-event-transport';
export * from './nest/event-bus.module';
