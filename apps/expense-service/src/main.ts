// First: starts tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) before any instrumented module loads.
import './tracing';
import 'reflect-metadata';
import { runResourceService } from '@invoicing/resource-api';
import { EXPENSE_SERVICE } from './expense-service.definition';

runResourceService(EXPENSE_SERVICE);
