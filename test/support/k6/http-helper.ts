// The k6 test adapter's network thread: performs the requests a VU thread makes "synchronously"
// (the VU blocks on Atomics.wait until this thread answers on the shared flag).
import http from 'node:http';
import https from 'node:https';
import { workerData, type MessagePort } from 'node:worker_threads';

export interface HttpCall {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | null;
  timeoutMs: number;
}

export interface HttpAnswer {
  status: number;
  headers: [string, string][];
  body: string;
  durationMs: number;
  error: string;
}

const { port, flag } = workerData as { port: MessagePort; flag: Int32Array };
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };
// k6's K6_LOCAL_IPS (one address here): the source address of every connection.
const localAddress = process.env.K6_LOCAL_IPS || undefined;

function perform(call: HttpCall): Promise<HttpAnswer> {
  const start = performance.now();
  return new Promise((resolve) => {
    const url = new URL(call.url);
    const mod = url.protocol === 'https:' ? https : http;
    const req = mod.request(url, { method: call.method, headers: call.headers, agent: url.protocol === 'https:' ? agents.https : agents.http, timeout: call.timeoutMs, localAddress }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const headers: [string, string][] = [];
        for (let i = 0; i < res.rawHeaders.length; i += 2) headers.push([res.rawHeaders[i]!, res.rawHeaders[i + 1]!]);
        resolve({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks).toString('utf8'), durationMs: performance.now() - start, error: '' });
      });
      res.on('error', (err) => resolve({ status: 0, headers: [], body: '', durationMs: performance.now() - start, error: err.message }));
    });
    req.on('timeout', () => req.destroy(new Error('request timeout')));
    req.on('error', (err) => resolve({ status: 0, headers: [], body: '', durationMs: performance.now() - start, error: err.message }));
    req.end(call.body ?? undefined);
  });
}

port.on('message', (call: HttpCall) => {
  void perform(call).then((answer) => {
    port.postMessage(answer);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  });
});
