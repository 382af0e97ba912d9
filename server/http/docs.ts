import { readFileSync } from 'node:fs';
import path from 'node:path';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';

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
/** The page renders the document of the variant this app serves (D-155); both are served. */
const init = (document: string) => `window.ui = SwaggerUIBundle({ url: '/docs/${document}', dom_id: '#docs', deepLinking: true, tryItOutEnabled: false });\n`;

// The package's index loads the 1.7 MB browser bundle into Node (~125 ms and memory at start);
// only the folder is needed.
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/**
 * The contract documents of `api-reference/`, each served at `/docs/<name>` whichever variant the
 * tenant serves: REST (OpenAPI) and `/ws` (AsyncAPI), of v1 and of the appendix variant.
 */
export const API_DOCUMENTS = ['openapi.yaml', 'openapi-legacy.yaml', 'asyncapi.yaml', 'asyncapi-legacy.yaml'] as const;
export type ApiDocument = (typeof API_DOCUMENTS)[number];

/**
 * The Swagger UI files the page loads, and no other (issue 41, D-283): not the package's stock
 * `index.html` (it loads petstore.swagger.io) or its other bundles, and no source maps.
 */
export const DOCS_ASSETS = ['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png'] as const;

/**
 * What every `/docs` answer carries: the page may load only its own scripts, styles and images
 * (Swagger UI sets inline styles and uses data: images) and fetch only this origin; no page may
 * frame it; no type sniffing.
 */
export const DOCS_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
} as const;

/** The paths `/docs` serves (all GET), for the 405 answers. */
export const DOCS_ROUTES = ['/docs', '/docs/init.js', ...API_DOCUMENTS.map((d) => `/docs/${d}`), ...DOCS_ASSETS.map((a) => `/docs/assets/${a}`)].map((path) => ({ method: 'GET' as const, path }));

/**
 * `/docs`: interactive API documentation rendered by Swagger UI from `openapi.yaml`, or from
 * `openapi-legacy.yaml` in a tenant serving the appendix variant.
 */
export function docsRouter(opts: { document?: 'openapi.yaml' | 'openapi-legacy.yaml' } = {}): Router {
  const r = express.Router();
  const INIT = init(opts.document ?? 'openapi.yaml');
  r.use('/docs', (_req: Request, res: Response, next: NextFunction) => {
    res.set(DOCS_SECURITY_HEADERS);
    next();
  });
  r.get('/docs', (_req, res) => res.type('html').send(PAGE));
  r.get('/docs/init.js', (_req, res) => res.type('js').send(INIT));
  for (const document of API_DOCUMENTS) {
    const text = readFileSync(path.join(API_REFERENCE_DIR, document));
    r.get(`/docs/${document}`, (_req, res) => res.type('application/yaml').send(text));
  }
  for (const asset of DOCS_ASSETS) {
    const file = path.join(SWAGGER_UI_DIR, asset);
    r.get(`/docs/assets/${asset}`, (_req, res, next) => res.sendFile(file, { maxAge: '1h' }, (err) => {
      if (err && !res.headersSent) next(err);
    }));
  }
  return r;
}
