import 'reflect-metadata';
import { runResourceService } from '@invoicing/resource-api';
import { CLIENT_SERVICE } from './client-service.definition';

runResourceService(CLIENT_SERVICE);
