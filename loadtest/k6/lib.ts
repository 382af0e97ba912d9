// The shared module of the k6 scripts: every helper of lib/ (and tweetnacl, which wallet.ts
// uses), bundled once into lib.js beside the scripts (loadtest/k6-build.ts). Scripts import it
// as `./lib.js`, the name k6 loads it by; TypeScript resolves that name to this file.
export * from './lib/api';
export * from './lib/checks';
export * from './lib/env';
export * from './lib/generated';
export * from './lib/wallet';
export * from './lib/ws';
