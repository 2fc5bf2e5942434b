import 'reflect-metadata';
import { runResourceService } from '@invoicing/resource-api';
import { INVOICE_SERVICE } from './invoice-service.definition';

runResourceService(INVOICE_SERVICE);
