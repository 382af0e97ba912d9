import { stringify } from 'yaml';
import { marketIndexerCrd } from '../../cdk8s/lib/crd';

/** cdk8s/crds/marketindexer.yaml: the CRD the operator serves, for `kubectl apply` and `cdk8s import`. */
export function marketIndexerCrdYaml(): string {
  return `# Generated from cdk8s/lib/crd.ts by \`npm run generate\`: do not edit.\n${stringify(marketIndexerCrd(), { lineWidth: 0 })}`;
}
