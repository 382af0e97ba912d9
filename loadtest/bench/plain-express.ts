// The ceiling for `npm run bench -- api`: a plain Express app in its own process (as the API
// runs in its own) answering `GET /<i>` with body i of the JSON array in BODIES_FILE, from
// memory: no middleware, rate limit, metrics or tracing. With OTEL_EXPORTER_OTLP_ENDPOINT set,
// it also opens and exports the API's own server span (the only middleware), which shows what
// OpenTelemetry alone costs on top of Express.
import { readFileSync } from 'node:fs';
import express from 'express';
import { serverSpans } from '../../core/telemetry/http-span';
import { startTracing } from '../../core/telemetry/tracing';

const endpoint = process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
startTracing({ endpoint, serviceName: 'plain-express', tenant: 'bench' });
const bodies = (JSON.parse(readFileSync(process.env.BODIES_FILE!, 'utf8')) as string[]).map((b) => Buffer.from(b));
const app = express();
app.disable('x-powered-by');
app.disable('etag');
if (endpoint) app.use(serverSpans());
app.get('/:i', (req, res) => void res.type('application/json').send(bodies[Number(req.params.i)]));
const server = app.listen(0, '127.0.0.1', () => process.send?.({ type: 'listening', port: (server.address() as { port: number }).port }));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
