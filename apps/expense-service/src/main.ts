import 'reflect-metadata';
import { runResourceService } from '@invoicing/resource-api';
import { EXPENSE_SERVICE } from './expense-service.definition';

runResourceService(EXPENSE_SERVICE);
