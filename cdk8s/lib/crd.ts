import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TENANT_PATTERN } from '../../core/config/settings';
import { deepPartial, TenantValuesSchema } from './values';

/**
 * The `MarketIndexer` custom resource (marketindexer.dev/v1alpha1, cluster-scoped: it owns its
 * tenant's namespace). Its spec is a tenant's values (the same schema as the environment files
 * and the Helm values, every field optional: the environment's defaults fill the rest), plus
 * the tenant id and what to do on deletion. The CRD under cdk8s/crds/marketindexer.yaml is
 * generated from here (`npm run generate`), and the operator validates with the same schema.
 */
export const GROUP = 'marketindexer.dev';
export const VERSION = 'v1alpha1';
export const KIND = 'MarketIndexer';
export const PLURAL = 'marketindexers';
export const API_VERSION = `${GROUP}/${VERSION}`;

export const DELETION_POLICIES = ['Retain', 'Delete'] as const;
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];

export const CONDITION_TYPES = ['Ready', 'Progressing', 'Degraded', 'IndexerLagging', 'Reindexing', 'DatabaseReady'] as const;
export type ConditionType = (typeof CONDITION_TYPES)[number];

const tenantSpec = deepPartial(TenantValuesSchema) as unknown as { properties: Record<string, TSchema> };

export const MarketIndexerSpecSchema = Type.Object(
  {
    tenant: Type.String({
      pattern: TENANT_PATTERN.source,
      maxLength: 40,
      description: 'tenant id (lowercase DNS label, at most 40 characters); its namespace is mi-<tenant>. Immutable.',
    }),
    deletionPolicy: Type.Unsafe<DeletionPolicy>({
      type: 'string',
      enum: [...DELETION_POLICIES],
      default: 'Retain',
      description: 'Retain keeps the namespace and its data objects (Secrets, PersistentVolumeClaims) when the resource is deleted; Delete removes them all',
    }),
    ...Object.fromEntries(Object.entries(tenantSpec.properties).map(([k, v]) => [k, Type.Optional(v)])),
  },
  { additionalProperties: false },
);
export type MarketIndexerSpec = Static<typeof MarketIndexerSpecSchema> & Record<string, unknown>;

const Condition = Type.Object({
  type: Type.String(),
  status: Type.Unsafe<'True' | 'False' | 'Unknown'>({ type: 'string', enum: ['True', 'False', 'Unknown'] }),
  reason: Type.String({ pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$', maxLength: 1024 }),
  message: Type.String({ maxLength: 32768 }),
  lastTransitionTime: Type.String({ format: 'date-time' }),
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
});
export type Condition = Static<typeof Condition>;

export const MarketIndexerStatusSchema = Type.Object({
  observedGeneration: Type.Optional(Type.Integer({ minimum: 0 })),
  namespace: Type.Optional(Type.String({ description: 'the tenant namespace' })),
  conditions: Type.Optional(Type.Array(Condition)),
  indexer: Type.Optional(
    Type.Object({
      lastProcessedSlot: Type.Optional(Type.String({ description: 'last slot committed (u64 as a string)' })),
      slotLag: Type.Optional(Type.Integer({ minimum: 0 })),
      writer: Type.Optional(Type.String({ description: 'the indexer process holding the writer lock (pod:pid)' })),
      observedAt: Type.Optional(Type.String({ format: 'date-time', description: 'when these figures were read; refreshed at most once a minute while nothing else changes' })),
    }),
  ),
  projection: Type.Optional(
    Type.Object({
      liveSchema: Type.Optional(Type.String({ description: 'the schema whose tables the API reads: public, or p<version> after a re-index switched to it' })),
      switchedFrom: Type.Optional(Type.String({ description: 'the schema the API read before the last switch the operator saw' })),
      build: Type.Optional(
        Type.Object(
          {
            schema: Type.String({ description: 'the projection schema being built beside the live one (p<version>)' }),
            lastProcessedSlot: Type.Optional(Type.String({ description: 'the last slot the build processed (u64 as a string)' })),
            chainTipSlot: Type.Optional(Type.Integer({ minimum: 0, description: "the chain's tip as the build's writer last saw it" })),
            slotLag: Type.Optional(Type.Integer({ minimum: 0 })),
            observedAt: Type.String({ format: 'date-time', description: 'when these figures were read (refreshed at most once a minute)' }),
          },
          { description: 'a re-index in progress (absent when none)' },
        ),
      ),
    }),
  ),
  api: Type.Optional(Type.Object({ readyReplicas: Type.Optional(Type.Integer({ minimum: 0 })) })),
  imageTag: Type.Optional(Type.String({ description: "the image tag the tenant's Deployments all run, as of the last complete rollout" })),
});
export type MarketIndexerStatus = Static<typeof MarketIndexerStatusSchema>;

export interface MarketIndexer {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    uid?: string;
    generation?: number;
    resourceVersion?: string;
    deletionTimestamp?: string;
    finalizers?: string[];
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: MarketIndexerSpec;
  status?: MarketIndexerStatus;
}

type Json = Record<string, unknown>;

/**
 * A JSON Schema as Kubernetes accepts it in a CRD (a structural schema): unknown fields are
 * pruned by the API server, so `additionalProperties: false` beside `properties` goes; numeric
 * exclusive bounds take the draft-4 form Kubernetes reads (`maximum` plus `exclusiveMaximum: true`); maps
 * (`patternProperties`) become `additionalProperties`; `propertyNames` is not supported (the
 * operator checks tenant ids itself); a union of types becomes int-or-string, the only one
 * Kubernetes has.
 */
export function structural(schema: TSchema | Json): Json {
  const s = schema as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(s)) {
    switch (k) {
      case 'properties':
        out.properties = Object.fromEntries(Object.entries(v as Record<string, Json>).map(([p, sub]) => [p, structural(sub)]));
        break;
      case 'patternProperties': {
        const [only] = Object.values(v as Record<string, Json>);
        out.additionalProperties = structural(only!);
        break;
      }
      case 'additionalProperties':
        if (typeof v === 'object') out.additionalProperties = structural(v as Json);
        break;
      case 'items':
        out.items = structural(v as Json);
        break;
      case 'oneOf':
      case 'anyOf':
        out['x-kubernetes-int-or-string'] = true;
        break;
      // Kubernetes' OpenAPI v3 has the draft-4 form: a bound and a boolean.
      case 'exclusiveMaximum':
      case 'exclusiveMinimum':
        if (typeof v === 'number') {
          out[k === 'exclusiveMaximum' ? 'maximum' : 'minimum'] = v;
          out[k] = true;
        } else out[k] = v;
        break;
      case 'propertyNames':
      case '$schema':
      case '$id':
        break;
      default:
        out[k] = v;
    }
  }
  if (out.properties && out.type === undefined) out.type = 'object';
  return out;
}

const NAME_RULE = {
  rule: 'self == oldSelf',
  message: 'tenant is immutable: create a new MarketIndexer for another tenant',
};

/** The CustomResourceDefinition object (apiextensions.k8s.io/v1). */
export function marketIndexerCrd(): Json {
  const spec = structural(MarketIndexerSpecSchema);
  (spec.properties as Record<string, Json>).tenant = { ...(spec.properties as Record<string, Json>).tenant, 'x-kubernetes-validations': [NAME_RULE] };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${PLURAL}.${GROUP}` },
    spec: {
      group: GROUP,
      names: { kind: KIND, listKind: `${KIND}List`, plural: PLURAL, singular: 'marketindexer', shortNames: ['mi'], categories: ['market-indexer'] },
      scope: 'Cluster',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Tenant', type: 'string', jsonPath: '.spec.tenant' },
            { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
            { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
            { name: 'Slot lag', type: 'integer', jsonPath: '.status.indexer.slotLag' },
            // A re-index's progress while it builds, then the switch it made (D-438).
            { name: 'Reindex', type: 'string', jsonPath: '.status.conditions[?(@.type=="Reindexing")].message' },
            { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
          ],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'One tenant of the market indexer: its namespace, API, indexer, policies and monitoring, kept converged by the operator.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object' },
                spec: spec,
                status: structural(MarketIndexerStatusSchema),
              },
            },
          },
        },
      ],
    },
  };
}
