// First: starts tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) before any instrumented module loads.
import './tracing';
import 'reflect-metadata';
import { runResourceService } from '@invoicing/resource-api';
import { CLIENT_SERVICE } from './client-service.definition';

runResourceService(CLIENT_SERVICE);
