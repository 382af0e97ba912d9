import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type Router } from 'express';

/** `api-reference/` beside the sources, and beside `dist/` after `npm run build` (which copies it). */
export const API_REFERENCE_DIR = path.resolve(__dirname, '../../api-reference');

// The page and its initializer are ours; every other asset is Swagger UI's own, served from
// the installed package: the docs work offline and load nothing from a CDN (decision D-55).
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Market Indexer API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<div id="docs"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;
const INIT = `window.ui = SwaggerUIBundle({ url: '/docs/openapi.yaml', dom_id: '#docs', deepLinking: true, tryItOutEnabled: false });\n`;

// The package's index loads the 1.7 MB browser bundle into Node (~125 ms and memory at start);
// only the folder is needed.
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The paths `/docs` serves (all GET), for the 405 answers. */
export const DOCS_ROUTES = ['/docs', '/docs/init.js', '/docs/openapi.yaml', '/docs/asyncapi.yaml', '/docs/assets/*file'].map((path) => ({ method: 'GET' as const, path }));

/** `/docs`: interactive API documentation rendered by Swagger UI from `openapi.yaml`. */
export function docsRouter(): Router {
  const r = express.Router();
  const openapi = readFileSync(path.join(API_REFERENCE_DIR, 'openapi.yaml'));
  const asyncapi = readFileSync(path.join(API_REFERENCE_DIR, 'asyncapi.yaml'));
  r.get('/docs', (_req, res) => res.type('html').send(PAGE));
  r.get('/docs/init.js', (_req, res) => res.type('js').send(INIT));
  r.get('/docs/openapi.yaml', (_req, res) => res.type('application/yaml').send(openapi));
  r.get('/docs/asyncapi.yaml', (_req, res) => res.type('application/yaml').send(asyncapi));
  r.use('/docs/assets', express.static(SWAGGER_UI_DIR, { index: false, maxAge: '1h' }));
  return r;
}
