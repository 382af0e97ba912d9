import { Construct } from 'constructs';
import { k8s } from 'cdk8s-plus-33';
import { CHAIN_PATHS, DEFAULT_PORTS, IMAGE } from '../../core/constants';
import { CHECKSUM_ANNOTATION } from './api';
import { imageOf, metadataOf, type TenantContext } from './context';
import { commonLabels, NAMES, selectorLabels } from './names';
import { containerSecurity, httpProbe, podDefaults, resourcesOf, tmpMount, tmpVolume } from './pod';
import { CHAIN_DATA_DIR, checksumOf, configMapData } from './settings-env';
import { CHAIN_RESOURCES } from './sizing';
import type { TenantValues } from './values';

export const CHAIN_PORT_NAME = 'rpc';
/** Genesis and journal: a few kilobytes a day of wallets' transactions. */
export const CHAIN_STORAGE = '256Mi';

/** What the tenant's API and indexer put in RPC_URL: the chain's Service in their namespace. */
export const chainRpcUrl = () => `http://${NAMES.chain}:${DEFAULT_PORTS.chain}`;

/** The chain's command line: the simulator's shape (kept with its genesis on the volume). */
export function chainArgs(values: TenantValues): string[] {
  const s = values.source.simulator;
  return ['--seed', String(s.seed), '--feeds', String(s.feeds), '--epoch-seconds', String(s.epochSeconds)];
}

/**
 * A simulator-source tenant's chain (D-211): the simulated chain in real time behind its Solana
 * JSON-RPC, as a validator would serve it, one pod with its genesis and the wallets'
 * transactions on a volume, so a restart rebuilds the same chain. The tenant's indexer follows
 * it with the production `rpc` source and its API builds `/tx/*` on its blockhashes.
 */
export class ChainWorkload extends Construct {
  constructor(scope: Construct, id: string, ctx: TenantContext) {
    super(scope, id);
    const { values } = ctx;
    const selector = selectorLabels(ctx.labels, 'chain');
    const data = configMapData(values, ctx.tenant, 'chain');
    new k8s.KubeConfigMap(this, 'settings', { metadata: metadataOf(ctx, NAMES.chain, 'chain'), data });

    new k8s.KubeService(this, 'service', {
      metadata: metadataOf(ctx, NAMES.chain, 'chain'),
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [{ name: CHAIN_PORT_NAME, port: DEFAULT_PORTS.chain, targetPort: k8s.IntOrString.fromString(CHAIN_PORT_NAME), protocol: 'TCP' }],
      },
    });

    new k8s.KubeStatefulSet(this, 'chain', {
      metadata: metadataOf(ctx, NAMES.chain, 'chain'),
      spec: {
        serviceName: NAMES.chain,
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: commonLabels(ctx.labels, 'chain'), annotations: { [CHECKSUM_ANNOTATION]: checksumOf(data) } },
          spec: {
            ...podDefaults(NAMES.serviceAccount),
            terminationGracePeriodSeconds: 10,
            containers: [
              {
                name: 'chain',
                image: imageOf(ctx),
                imagePullPolicy: values.image.pullPolicy,
                command: [...IMAGE.commands.chain],
                args: chainArgs(values),
                ports: [{ name: CHAIN_PORT_NAME, containerPort: DEFAULT_PORTS.chain, protocol: 'TCP' }],
                envFrom: [{ configMapRef: { name: NAMES.chain } }],
                // It listens at once and answers `behind` while it rebuilds: alive is answering,
                // ready is caught up with the wall clock (a restart a day later takes minutes).
                startupProbe: httpProbe(CHAIN_PATHS.live, CHAIN_PORT_NAME, { periodSeconds: 2, failureThreshold: 30 }),
                livenessProbe: httpProbe(CHAIN_PATHS.live, CHAIN_PORT_NAME, { periodSeconds: 10, failureThreshold: 3, timeoutSeconds: 5 }),
                readinessProbe: httpProbe(CHAIN_PATHS.health, CHAIN_PORT_NAME, { periodSeconds: 5, failureThreshold: 2 }),
                resources: resourcesOf(CHAIN_RESOURCES),
                securityContext: containerSecurity(),
                volumeMounts: [tmpMount, { name: 'data', mountPath: CHAIN_DATA_DIR }],
              },
            ],
            volumes: [tmpVolume()],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: k8s.Quantity.fromString(CHAIN_STORAGE) } } },
          },
        ],
      },
    });
  }
}
