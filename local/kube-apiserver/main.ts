// `npm run kube:test-apiserver -- [--port <p>] [--kubeconfig-out <file>]`: the test API server
// (local/kube-apiserver) on loopback, for trying the operator and kubectl on a laptop.
import { writeFileSync } from 'node:fs';
import { intOption, parseArgsOrExit } from '../../core/cli';
import { startTestApiServer } from './server';

const USAGE = `usage: npm run kube:test-apiserver -- [--port 6443] [--kubeconfig-out FILE]
  the project's test Kubernetes API server (local/kube-apiserver) on loopback, to try the operator
  and kubectl on a laptop (docs/operator.md); --kubeconfig-out writes a kubeconfig that reaches it.`;

const { values } = parseArgsOrExit(
  { options: { port: { type: 'string', default: '6443' }, 'kubeconfig-out': { type: 'string' }, help: { type: 'boolean' } }, strict: true },
  USAGE,
);
const port = intOption('port', values.port)!;
void (async () => {
  const api = await startTestApiServer({ port }).catch((err: NodeJS.ErrnoException) => {
    process.stderr.write(err.code === 'EADDRINUSE' ? `port ${port} is in use: choose another with --port\n` : `${err.message}\n`);
    process.exit(1);
  });
  if (values['kubeconfig-out']) writeFileSync(values['kubeconfig-out'], api.kubeconfig());
  process.stdout.write(`test API server on ${api.url}${values['kubeconfig-out'] ? `; kubeconfig in ${values['kubeconfig-out']}` : ''}\n`);
  process.send?.({ type: 'listening', port: api.port });
  const stop = () => void api.close().then(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
})();
