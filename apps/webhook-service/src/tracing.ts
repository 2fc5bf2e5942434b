import { startTracing } from '@invoicing/service-kit/tracing';

// Imported first by main.ts: tracing, when configured, must patch http, pg and fetch before anything
// requires them (libs/service-kit/src/tracing/index.ts).
startTracing('webhook-service');
