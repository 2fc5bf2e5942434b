import 'reflect-metadata';
import { runResourceService } from '@invoicing/resource-api';
import { PRODUCT_SERVICE } from './product-service.definition';

runResourceService(PRODUCT_SERVICE);
