// The ceiling for `npm run bench -- api`: a plain Express app in its own process (as the API
// runs in its own) answering `GET /<i>` with body i of the JSON array in BODIES_FILE, from
// memory: no middleware, rate limit, metrics or tracing.
import { readFileSync } from 'node:fs';
import express from 'express';

const bodies = (JSON.parse(readFileSync(process.env.BODIES_FILE!, 'utf8')) as string[]).map((b) => Buffer.from(b));
const app = express();
app.disable('x-powered-by');
app.disable('etag');
app.get('/:i', (req, res) => void res.type('application/json').send(bodies[Number(req.params.i)]));
const server = app.listen(0, '127.0.0.1', () => process.send?.({ type: 'listening', port: (server.address() as { port: number }).port }));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
