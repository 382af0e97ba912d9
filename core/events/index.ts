export * from './types';
export * from './codec';
export * from './transaction';
export * from './parser';
export * from './builder';
