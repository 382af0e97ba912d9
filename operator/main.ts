// The MarketIndexer operator: `npm run operator -- [--kubeconfig <file>]` (docs/operator.md).
import { parseArgsOrExit } from '../core/cli';
import { loadConfigOrExit } from '../core/config';

const USAGE = `usage: npm run operator -- [--kubeconfig <file>]
  reconciles every MarketIndexer (marketindexer.dev/v1alpha1) into its tenant; in a pod it uses
  its service account, elsewhere KUBECONFIG or ~/.kube/config. Settings: docs/configuration.md (OPERATOR_*).`;

const { values } = parseArgsOrExit({ options: { kubeconfig: { type: 'string' }, help: { type: 'boolean' } }, strict: true }, USAGE);
const config = loadConfigOrExit();
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runOperator } = require('./run') as typeof import('./run');
void runOperator(config, { kubeconfig: values.kubeconfig });
