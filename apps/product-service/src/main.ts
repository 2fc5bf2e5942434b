// First: starts tracing (when OTEL_EXPORTER_OTLP_ENDPOINT is set) before any instrumented module loads.
import './tracing';
import 'reflect-metadata';
import { runResourceService } from '@invoicing/resource-api';
import { PRODUCT_SERVICE } from './product-service.definition';

runResourceService(PRODUCT_SERVICE);
