export * from './codes';
export * from './book';
export * from './fees';
export * from './positions';
