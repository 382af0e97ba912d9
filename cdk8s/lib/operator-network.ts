import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { DEFAULT_PORTS } from '../../core/constants';
import { HTTP_PORT_NAME } from './api';
import type { PlatformContext } from './context';
import { ENVIRONMENT_LABEL, platformLabels } from './names';
import { OPERATOR_NAME } from './operator-permissions';
import type { TenantValues } from './values';

/** The label the operator's tenant namespaces carry (the kit's managed-by label, operator/informers.ts). */
const MANAGED_BY_OPERATOR = { 'app.kubernetes.io/managed-by': OPERATOR_NAME };

const tcp = (port: number | string): k8s.NetworkPolicyPort => ({
  protocol: 'TCP',
  port: typeof port === 'number' ? k8s.IntOrString.fromNumber(port) : k8s.IntOrString.fromString(port),
});

/**
 * The operator's pods reach the API server, DNS and the tenants' indexers' `/status` port (in the
 * namespaces it manages for this environment), nothing else; only the scraper reaches them
 * (D-201). The API server's addresses are the platform's `operator.apiServer`.
 */
export class OperatorNetworkPolicy extends Construct {
  constructor(scope: Construct, id: string, ctx: PlatformContext, environmentValues: TenantValues, selector: Record<string, string>) {
    super(scope, id);
    const api = ctx.values.operator.apiServer;
    new k8s.KubeNetworkPolicy(this, 'policy', {
      metadata: { name: OPERATOR_NAME, namespace: ctx.values.namespace, labels: platformLabels(ctx, 'operator') },
      spec: {
        podSelector: { matchLabels: selector },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [
          {
            from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': environmentValues.networkPolicy.monitoringNamespace } } }],
            ports: [tcp(HTTP_PORT_NAME)],
          },
        ],
        egress: [
          {
            to: api.ipBlocks.map((b) => ({ ipBlock: { cidr: b.cidr, ...(b.except?.length ? { except: b.except } : {}) } })),
            ports: api.ports.map(tcp),
          },
          {
            to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
            ports: [
              { protocol: 'UDP', port: k8s.IntOrString.fromNumber(53) },
              { protocol: 'TCP', port: k8s.IntOrString.fromNumber(53) },
            ],
          },
          {
            to: [
              {
                namespaceSelector: { matchLabels: { ...MANAGED_BY_OPERATOR, [ENVIRONMENT_LABEL]: ctx.environment } },
                podSelector: { matchLabels: { 'app.kubernetes.io/component': 'indexer' } },
              },
            ],
            ports: [tcp(DEFAULT_PORTS.indexer)],
          },
        ],
      },
    });
  }
}
