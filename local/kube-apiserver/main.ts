// `npm run kube:test-apiserver -- [--port <p>] [--kubeconfig-out <file>]`: the test API server
// (local/kube-apiserver) on loopback, for trying the operator and kubectl on a laptop.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startTestApiServer } from './server';

const { values } = parseArgs({ options: { port: { type: 'string', default: '6443' }, 'kubeconfig-out': { type: 'string' } }, strict: true });
void (async () => {
  const api = await startTestApiServer({ port: Number(values.port) });
  if (values['kubeconfig-out']) writeFileSync(values['kubeconfig-out'], api.kubeconfig());
  process.stdout.write(`test API server on ${api.url}${values['kubeconfig-out'] ? `; kubeconfig in ${values['kubeconfig-out']}` : ''}\n`);
  process.send?.({ type: 'listening', port: api.port });
  const stop = () => void api.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
})();
