import { Type, type Static } from '@sinclair/typebox';

/** The schema's building blocks: patterns and small types the tenant's values are made of (values.ts). */

export const DNS_LABEL = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
export const DNS_SUBDOMAIN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';
/** Kubernetes resource quantity, written as a string ("250m", "1", "512Mi"). */
export const QUANTITY = '^[0-9]+(\\.[0-9]+)?(m|k|M|G|T|Ki|Mi|Gi|Ti)?$';
export const CIDR = '^[0-9a-fA-F.:]+/[0-9]{1,3}$';
/** An address or a subnet, IPv4 or IPv6, as Express's `trust proxy` (proxy-addr) takes it. */
export const ADDRESS_OR_CIDR = '^[0-9a-fA-F.:]+(/[0-9]{1,3})?$';
export const DURATION = '^[0-9]+(ms|s|m|h)$';

/** A string from a fixed list, as JSON Schema `enum` (clearer errors than a union of constants). */
export const StringEnum = <const T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });

export const Quantity = (description: string) => Type.String({ pattern: QUANTITY, description });
export const StringMap = (description: string) => Type.Record(Type.String(), Type.String(), { description });

export const SecretKeyRef = Type.Object(
  {
    name: Type.String({ pattern: DNS_SUBDOMAIN, maxLength: 253, description: 'Secret in the tenant namespace' }),
    key: Type.String({ pattern: '^[-._a-zA-Z0-9]+$', maxLength: 253, description: 'key in that Secret' }),
  },
  { additionalProperties: false },
);
export type SecretKeyRef = Static<typeof SecretKeyRef>;

export const Resources = Type.Object(
  {
    requests: Type.Object(
      { cpu: Quantity('CPU request'), memory: Quantity('memory request') },
      { additionalProperties: false },
    ),
    limits: Type.Object(
      { cpu: Quantity('CPU limit'), memory: Quantity('memory limit') },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type Resources = Static<typeof Resources>;

export const IpBlock = Type.Object(
  {
    cidr: Type.String({ pattern: CIDR }),
    except: Type.Optional(Type.Array(Type.String({ pattern: CIDR }), { description: 'ranges inside cidr to leave out' })),
  },
  { additionalProperties: false },
);

/** Where a workload may open connections to: address blocks and ports (NetworkPolicy egress). */
export const Destination = Type.Object(
  {
    ipBlocks: Type.Array(IpBlock, { description: 'address blocks (a NetworkPolicy ipBlock each)' }),
    ports: Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), { minItems: 1, description: 'TCP ports' }),
  },
  { additionalProperties: false },
);
export type Destination = Static<typeof Destination>;
