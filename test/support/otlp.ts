import http from 'node:http';

/**
 * A stand-in OTLP/HTTP collector (no collector runs here): it records what the exporter
 * POSTs, in the OTLP/JSON encoding the production exporter sends.
 */
export interface Collector {
  requests: { url: string; body: string }[];
  url: string;
  close(): void;
}

export async function startCollector(): Promise<Collector> {
  const requests: { url: string; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests.push({ url: req.url ?? '', body });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { requests, url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, close: () => server.close() };
}

type Value = { stringValue?: string; intValue?: string | number };

export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  status?: { code?: number };
  attributes: { key: string; value: Value }[];
}

export const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

/** Every span the collector received on `/v1/traces`, and the `service.name`s they came from. */
export function exportedSpans(c: Collector): { services: string[]; spans: OtlpSpan[] } {
  const batches = c.requests
    .filter((r) => r.url === '/v1/traces')
    .map((r) => JSON.parse(r.body) as { resourceSpans: { resource: { attributes: { key: string; value: Value }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[] });
  const resources = batches.flatMap((b) => b.resourceSpans);
  const services = new Set(resources.map((r) => r.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? ''));
  return { services: [...services], spans: resources.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)) };
}
