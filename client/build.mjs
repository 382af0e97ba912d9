// The SDK's build (D-523): dist/index.js and dist/node.js (ESM, for Node and bundlers),
// dist/browser.js (one minified ESM file a page can load as is), and the .d.ts files.
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(join(here, 'package.json'));
const esbuild = require('esbuild');
const common = { bundle: true, format: 'esm', target: 'es2022', absWorkingDir: here, logLevel: 'warning' };
await esbuild.build({ ...common, entryPoints: ['src/index.ts', 'src/node.ts'], outdir: 'dist', platform: 'neutral', external: ['ws', 'node:*', 'openapi-fetch'] });
// The browser file carries openapi-fetch inside and must not need Node: platform browser refuses `node:` imports.
await esbuild.build({ ...common, entryPoints: ['src/index.ts'], outfile: 'dist/browser.js', platform: 'browser', minify: true, metafile: false });
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(here, 'tsconfig.json')], { stdio: 'inherit' });
