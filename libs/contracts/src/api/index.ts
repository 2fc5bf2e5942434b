export * from './common.schema';
export * from './clients.schema';
export * from './products.schema';
export * from './invoices.schema';
export * from './payments.schema';
export * from './expenses.schema';
