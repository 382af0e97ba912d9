import { Type } from '@sinclair/typebox';
import { Destination, DNS_LABEL, DNS_SUBDOMAIN, Quantity, Resources, StringEnum } from './schema-parts';

/**
 * A CloudNativePG `Cluster` (postgresql.cnpg.io/v1) for the tenant's database (D-500): the kit
 * renders it, the API and the indexer reach it through its `-rw` Service with the credentials of
 * its generated `-app` Secret. Needs the CloudNativePG operator in the cluster.
 */
export const CloudNativePg = Type.Object(
  {
    enabled: Type.Boolean({ description: "a CloudNativePG Cluster per tenant (needs the CloudNativePG operator); off: bring your own PostgreSQL (database.secretRef)" }),
    instances: Type.Integer({ minimum: 1, maximum: 9, description: 'PostgreSQL instances: one primary, the rest hot standbys CloudNativePG promotes when the primary is lost' }),
    imageName: Type.String({ minLength: 1, description: 'PostgreSQL operand image (a CloudNativePG image, same major version on every instance)' }),
    storage: Type.Object(
      {
        size: Quantity('volume size of each instance'),
        storageClass: Type.String({ pattern: `^(${DNS_SUBDOMAIN.slice(1, -1)})?$`, maxLength: 253, description: "StorageClass of the volumes; empty: the cluster's default" }),
      },
      { additionalProperties: false },
    ),
    synchronous: Type.Object(
      {
        enabled: Type.Boolean({
          description: "synchronous replication (the Cluster's postgresql.synchronous, method any): a commit returns once `number` standbys have it, so a failover loses no committed transaction",
        }),
        number: Type.Integer({ minimum: 1, maximum: 8, description: 'standbys each commit waits for; below instances' }),
        dataDurability: StringEnum(['required', 'preferred'] as const, {
          description: 'required: writes wait while too few standbys are up (no committed write is ever lost); preferred: writes go on with fewer (availability first)',
        }),
      },
      { additionalProperties: false },
    ),
    resources: Resources,
    operatorNamespace: Type.String({ pattern: DNS_LABEL, maxLength: 63, description: "namespace of the CloudNativePG operator, whose pods reach the instances' status port (8000)" }),
    apiServer: {
      ...Destination,
      description: "the Kubernetes API server's addresses and ports: the instance manager in each PostgreSQL pod watches its Cluster there (the instances' only egress besides DNS and each other)",
    },
  },
  { additionalProperties: false },
);

