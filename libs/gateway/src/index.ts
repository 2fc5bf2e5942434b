export * from './instances';
export * from './limits';
export * from './nginx-config';
export * from './nginx-process';
