import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { HTTP_PORT_NAME } from './api';
import { CHAIN_PORT_NAME } from './chain';
import { metadataOf, type TenantContext } from './context';
import { cloudNativePgPolicy, toCloudNativePg } from './cloudnativepg';
import { DEV_STORE_PORTS } from './dev-stores';
import { httpRouteRenders } from './edge-values';
import { NAMES, selectorLabels, type Component } from './names';
import { effectiveSetting } from './resolve';
import type { Destination } from './values';

const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

const inNamespace = (name: string): k8s.NetworkPolicyPeer => ({ namespaceSelector: { matchLabels: { [NAMESPACE_NAME_LABEL]: name } } });
const tcp = (port: number | string): k8s.NetworkPolicyPort => ({
  protocol: 'TCP',
  port: typeof port === 'number' ? k8s.IntOrString.fromNumber(port) : k8s.IntOrString.fromString(port),
});
/** The tenant's pods of these components. */
const clientsOf = (components: Component[]): k8s.NetworkPolicyPeer => ({
  podSelector: { matchExpressions: [{ key: 'app.kubernetes.io/component', operator: 'In', values: components }] },
});
const ipBlocks = (blocks: Destination['ipBlocks']): k8s.NetworkPolicyPeer[] =>
  blocks.map((b) => ({ ipBlock: { cidr: b.cidr, ...(b.except?.length ? { except: b.except } : {}) } }));

/**
 * A tenant namespace denies all traffic in and out, then opens only what each part needs:
 * DNS for everyone; the API from the edge (the Gateway's data plane, the ingress controller:
 * whichever the tenant renders) and the scraper; the indexer from the
 * scraper and the webhook senders; egress to PostgreSQL, Redis, the RPC node (the API's
 * /tx/* too) and the trace collector by address block (or, with the dev stores and the
 * simulated chain, to their pods).
 */
export class TenantNetworkPolicies extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const { values } = ctx;
    const np = values.networkPolicy;
    const dev = values.devStores.enabled;

    const policy = (id: string, name: string, spec: k8s.NetworkPolicySpec, component?: Component) =>
      new k8s.KubeNetworkPolicy(this, id, { metadata: metadataOf(ctx, name, component), spec });

    policy('default-deny', 'default-deny', { podSelector: {}, policyTypes: ['Ingress', 'Egress'] });
    policy('dns', 'allow-dns', {
      podSelector: {},
      policyTypes: ['Egress'],
      egress: [
        {
          to: [{ ...inNamespace('kube-system'), podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
          ports: [
            { protocol: 'UDP', port: k8s.IntOrString.fromNumber(53) },
            { protocol: 'TCP', port: k8s.IntOrString.fromNumber(53) },
          ],
        },
      ],
    });

    const store = (component: 'postgres' | 'redis', dest: Destination): k8s.NetworkPolicyEgressRule =>
      dev
        ? { to: [{ podSelector: { matchLabels: selectorLabels(ctx.labels, component) } }], ports: [tcp(DEV_STORE_PORTS[component])] }
        : { to: ipBlocks(dest.ipBlocks), ports: dest.ports.map(tcp) };
    const out = (dest: Destination): k8s.NetworkPolicyEgressRule => ({ to: ipBlocks(dest.ipBlocks), ports: dest.ports.map(tcp) });

    // A CloudNativePG Cluster's instances are the tenant's own pods (D-504).
    const database = values.database.cloudnativepg.enabled ? toCloudNativePg() : store('postgres', np.egress.database);
    const common = [database, store('redis', np.egress.redis)];
    const simulated = values.source.type === 'simulator';
    const rpc: k8s.NetworkPolicyEgressRule = simulated
      ? { to: [{ podSelector: { matchLabels: selectorLabels(ctx.labels, 'chain') } }], ports: [tcp(CHAIN_PORT_NAME)] }
      : out(np.egress.rpc);
    const traced = effectiveSetting(values, 'OTEL_EXPORTER_OTLP_ENDPOINT') ? [out(np.egress.otlp)] : [];
    const scraper: k8s.NetworkPolicyIngressRule = { from: [inNamespace(np.monitoringNamespace)], ports: [tcp(HTTP_PORT_NAME)] };
    // The environment's operator reads the indexer's /status into its MarketIndexer's status.
    const operator: k8s.NetworkPolicyIngressRule = {
      from: [{ ...inNamespace(ctx.platformNamespace), podSelector: { matchLabels: { 'app.kubernetes.io/component': 'operator' } } }],
      ports: [tcp(HTTP_PORT_NAME)],
    };

    const edges = [
      ...(httpRouteRenders(values) ? [inNamespace(np.gatewayNamespace)] : []),
      ...(values.api.ingress.enabled ? [inNamespace(np.ingressControllerNamespace)] : []),
    ];
    policy(
      'api',
      NAMES.api,
      {
        podSelector: { matchLabels: selectorLabels(ctx.labels, 'api') },
        policyTypes: ['Ingress', 'Egress'],
        // Only the edge the tenant has (D-483): a namespace admitted for nothing is a way in for whatever runs there.
        ingress: [...(edges.length ? [{ from: edges, ports: [tcp(HTTP_PORT_NAME)] }] : []), scraper],
        // The RPC: /tx/* builds on its blockhashes (D-142).
        egress: [...common, rpc, ...traced],
      },
      'api',
    );

    const webhook = values.source.type === 'webhook' || values.source.webhookSecretRef !== undefined;
    policy(
      'indexer',
      NAMES.indexer,
      {
        podSelector: { matchLabels: selectorLabels(ctx.labels, 'indexer') },
        policyTypes: ['Ingress', 'Egress'],
        ingress: [scraper, operator, ...(webhook && np.webhookSenders.length ? [{ from: ipBlocks(np.webhookSenders), ports: [tcp(HTTP_PORT_NAME)] }] : [])],
        egress: [...common, ...(values.source.type === 'webhook' ? [] : [rpc]), ...traced],
      },
      'indexer',
    );

    // A re-index's builder (D-440) reaches what the indexer reaches; only the scraper reaches it.
    const building = values.indexer.build.enabled;
    if (building) {
      policy(
        'indexer-build',
        NAMES.indexerBuild,
        {
          podSelector: { matchLabels: selectorLabels(ctx.labels, 'indexer-build') },
          policyTypes: ['Ingress', 'Egress'],
          ingress: [scraper],
          egress: [...common, rpc, ...traced],
        },
        'indexer-build',
      );
    }
    const storeClients: Component[] = building ? ['api', 'indexer', 'indexer-build'] : ['api', 'indexer'];

    if (simulated) {
      policy(
        'chain',
        NAMES.chain,
        {
          podSelector: { matchLabels: selectorLabels(ctx.labels, 'chain') },
          policyTypes: ['Ingress'],
          ingress: [{ from: [clientsOf(storeClients)], ports: [tcp(CHAIN_PORT_NAME)] }],
        },
        'chain',
      );
    }

    if (values.database.cloudnativepg.enabled) policy('database', NAMES.database, cloudNativePgPolicy(ctx, clientsOf(storeClients)), 'database');

    if (dev) {
      const clients = clientsOf(storeClients);
      for (const component of ['postgres', 'redis'] as const) {
        policy(
          component,
          NAMES[component],
          {
            podSelector: { matchLabels: selectorLabels(ctx.labels, component) },
            policyTypes: ['Ingress'],
            ingress: [{ from: [clients], ports: [tcp(DEV_STORE_PORTS[component])] }],
          },
          component,
        );
      }
    }
  }
}
