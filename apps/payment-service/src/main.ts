import 'reflect-metadata';
import { runResourceService } from '@invoicing/resource-api';
import { PAYMENT_SERVICE } from './payment-service.definition';

runResourceService(PAYMENT_SERVICE);
