import { startTracing } from '@invoicing/service-kit/tracing';

// Imported first by main.ts: tracing, when configured, must patch http, pg, ioredis and fetch before
// anything requires them (libs/service-kit/src/tracing/index.ts).
startTracing('expense-service');
