export * from './instructions';
export * from './pda';
export * from './build';
export * from './wire';
export * from './chain';
