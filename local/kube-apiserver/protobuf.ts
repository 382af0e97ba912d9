import { Root, Type, type INamespace } from 'protobufjs';
import type { Json } from './fields';
import { ApiError } from './store';

/**
 * The Kubernetes protobuf encoding of request bodies, for the kinds kubectl sends that way
 * (`application/vnd.kubernetes.protobuf`): client-go encodes built-in kinds as protobuf, so
 * `kubectl create namespace`, `create secret generic`, `create configmap` and
 * `create serviceaccount` send them so. A body is the 4-byte magic `k8s\0` and a
 * `runtime.Unknown` whose `raw` holds the object. Field numbers are those of k8s.io/api's and
 * k8s.io/apimachinery's generated.proto (core/v1, meta/v1, runtime). Answers stay JSON (every
 * client-go caller accepts it). A kind not listed here is refused with 415, naming it.
 */
export const PROTOBUF = 'application/vnd.kubernetes.protobuf';
const MAGIC = Buffer.from('k8s\0', 'latin1');

const f = (type: string, id: number) => ({ type, id });
const rep = (type: string, id: number) => ({ type, id, rule: 'repeated' });
const map = (type: string, id: number) => ({ keyType: 'string', type, id });

const DESCRIPTOR: INamespace = {
  nested: {
    runtime: {
      nested: {
        TypeMeta: { fields: { apiVersion: f('string', 1), kind: f('string', 2) } },
        Unknown: { fields: { typeMeta: f('TypeMeta', 1), raw: f('bytes', 2), contentEncoding: f('string', 3), contentType: f('string', 4) } },
      },
    },
    meta: {
      nested: {
        Time: { fields: { seconds: f('int64', 1), nanos: f('int32', 2) } },
        FieldsV1: { fields: { Raw: f('bytes', 1) } },
        ManagedFieldsEntry: {
          fields: { manager: f('string', 1), operation: f('string', 2), apiVersion: f('string', 3), time: f('Time', 4), fieldsType: f('string', 6), fieldsV1: f('FieldsV1', 7), subresource: f('string', 8) },
        },
        OwnerReference: {
          fields: { kind: f('string', 1), name: f('string', 3), uid: f('string', 4), apiVersion: f('string', 5), controller: f('bool', 6), blockOwnerDeletion: f('bool', 7) },
        },
        ObjectMeta: {
          fields: {
            name: f('string', 1),
            generateName: f('string', 2),
            namespace: f('string', 3),
            selfLink: f('string', 4),
            uid: f('string', 5),
            resourceVersion: f('string', 6),
            generation: f('int64', 7),
            creationTimestamp: f('Time', 8),
            deletionTimestamp: f('Time', 9),
            deletionGracePeriodSeconds: f('int64', 10),
            labels: map('string', 11),
            annotations: map('string', 12),
            ownerReferences: rep('OwnerReference', 13),
            finalizers: rep('string', 14),
            managedFields: rep('ManagedFieldsEntry', 17),
          },
        },
        Preconditions: { fields: { uid: f('string', 1), resourceVersion: f('string', 2) } },
        DeleteOptions: {
          fields: { gracePeriodSeconds: f('int64', 1), preconditions: f('Preconditions', 2), orphanDependents: f('bool', 3), propagationPolicy: f('string', 4), dryRun: rep('string', 5) },
        },
      },
    },
    core: {
      nested: {
        NamespaceSpec: { fields: { finalizers: rep('string', 1) } },
        NamespaceCondition: { fields: { type: f('string', 1), status: f('string', 2), lastTransitionTime: f('meta.Time', 4), reason: f('string', 5), message: f('string', 6) } },
        NamespaceStatus: { fields: { phase: f('string', 1), conditions: rep('NamespaceCondition', 2) } },
        Namespace: { fields: { metadata: f('meta.ObjectMeta', 1), spec: f('NamespaceSpec', 2), status: f('NamespaceStatus', 3) } },
        ConfigMap: { fields: { metadata: f('meta.ObjectMeta', 1), data: map('string', 2), binaryData: map('bytes', 3), immutable: f('bool', 4) } },
        Secret: { fields: { metadata: f('meta.ObjectMeta', 1), data: map('bytes', 2), type: f('string', 3), stringData: map('string', 4), immutable: f('bool', 5) } },
        ObjectReference: {
          fields: { kind: f('string', 1), namespace: f('string', 2), name: f('string', 3), uid: f('string', 4), apiVersion: f('string', 5), resourceVersion: f('string', 6), fieldPath: f('string', 7) },
        },
        LocalObjectReference: { fields: { name: f('string', 1) } },
        ServiceAccount: {
          fields: { metadata: f('meta.ObjectMeta', 1), secrets: rep('ObjectReference', 2), imagePullSecrets: rep('LocalObjectReference', 3), automountServiceAccountToken: f('bool', 4) },
        },
      },
    },
  },
};

const root = Root.fromJSON(DESCRIPTOR);
const UNKNOWN = root.lookupType('runtime.Unknown');

/** `apiVersion/kind` → its message. DeleteOptions is matched by kind alone (any group's version). */
const KINDS: Record<string, string> = {
  'v1/Namespace': 'core.Namespace',
  'v1/ConfigMap': 'core.ConfigMap',
  'v1/Secret': 'core.Secret',
  'v1/ServiceAccount': 'core.ServiceAccount',
};
export const DECODED_KINDS = [...Object.keys(KINDS), 'DeleteOptions'];

/**
 * Fields that are pointers in the Go types: their zero value was sent on purpose and means
 * something (`gracePeriodSeconds: 0` deletes at once). Every other zero value on the wire is
 * what Go writes for a field it leaves unset, so it is dropped, as `omitempty` drops it in JSON.
 */
const PRESENCE = new Set([
  'DeleteOptions.gracePeriodSeconds',
  'DeleteOptions.orphanDependents',
  'DeleteOptions.propagationPolicy',
  'Preconditions.uid',
  'Preconditions.resourceVersion',
  'ObjectMeta.deletionGracePeriodSeconds',
  'OwnerReference.controller',
  'OwnerReference.blockOwnerDeletion',
  'ConfigMap.immutable',
  'Secret.immutable',
  'ServiceAccount.automountServiceAccountToken',
]);

const rfc3339 = (t: Json) => {
  const ms = Number(t.seconds ?? 0) * 1000 + Math.floor(Number(t.nanos ?? 0) / 1e6);
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
};

/** A decoded message (protobufjs `toObject`: longs as numbers, bytes as base64) as Kubernetes JSON. */
function toJson(type: Type, plain: Json): Json | undefined {
  const out: Json = {};
  for (const field of type.fieldsArray) {
    const v = plain[field.name];
    if (v === undefined || v === null) continue;
    const sub = field.resolvedType instanceof Type ? field.resolvedType : undefined;
    const one = (x: unknown): unknown => {
      if (!sub) return x;
      if (sub.name === 'Time') return Object.keys(x as Json).length ? rfc3339(x as Json) : undefined;
      if (sub.name === 'FieldsV1') return JSON.parse(Buffer.from(String((x as Json).Raw ?? ''), 'base64').toString('utf8') || '{}');
      return toJson(sub, x as Json);
    };
    let value: unknown;
    if (field.map) value = Object.fromEntries(Object.entries(v as Json).map(([k, x]) => [k, one(x)]));
    else if (field.repeated) value = (v as unknown[]).map(one);
    else value = one(v);
    const empty =
      value === undefined ||
      value === '' ||
      value === 0 ||
      value === false ||
      (Array.isArray(value) && !value.length) ||
      (typeof value === 'object' && value !== null && !Array.isArray(value) && !Object.keys(value).length);
    if (empty && !(PRESENCE.has(`${type.name}.${field.name}`) && (value === '' || value === 0 || value === false))) continue;
    out[field.name] = value;
  }
  return Object.keys(out).length ? out : undefined;
}

const bad = (why: string) => new ApiError(400, 'BadRequest', `the request body could not be decoded: ${why}`);

/**
 * Decodes a protobuf request body into the JSON object it stands for. `expected` is the kind the
 * URL takes (DeleteOptions for a DELETE); a body of another kind is refused as the real server
 * refuses it.
 */
export function decodeProtobuf(body: Buffer, expected: string): Json {
  if (body.length < MAGIC.length || !body.subarray(0, MAGIC.length).equals(MAGIC)) throw bad('a protobuf body must start with the k8s\\x00 envelope');
  let unknown: { typeMeta?: { apiVersion?: string; kind?: string }; raw?: Uint8Array; contentEncoding?: string; contentType?: string };
  try {
    unknown = UNKNOWN.decode(body.subarray(MAGIC.length)) as typeof unknown;
  } catch (err) {
    throw bad((err as Error).message);
  }
  const apiVersion = unknown.typeMeta?.apiVersion ?? '';
  const kind = unknown.typeMeta?.kind ?? '';
  if (unknown.contentEncoding) throw new ApiError(415, 'UnsupportedMediaType', `content encoding "${unknown.contentEncoding}" of a protobuf body is not supported`);
  if (unknown.contentType && unknown.contentType !== PROTOBUF) throw new ApiError(415, 'UnsupportedMediaType', `a protobuf envelope holding ${unknown.contentType} is not supported`);
  const message = kind === 'DeleteOptions' ? 'meta.DeleteOptions' : KINDS[`${apiVersion}/${kind}`];
  if (!message) {
    throw new ApiError(
      415,
      'UnsupportedMediaType',
      `the test API server does not decode protobuf bodies of kind ${kind || '(none)'} (${apiVersion || 'no apiVersion'}); it decodes ${DECODED_KINDS.join(', ')}. Send it as JSON, for example with kubectl create -f or apply -f`,
    );
  }
  if (kind !== expected) throw bad(`the object provided is unrecognized (must be of type ${expected}): ${kind}`);
  const type = root.lookupType(message);
  let plain: Json;
  try {
    plain = type.toObject(type.decode(unknown.raw ?? new Uint8Array()), { longs: Number, bytes: String }) as Json;
  } catch (err) {
    throw bad(`${kind}: ${(err as Error).message}`);
  }
  return { apiVersion, kind, ...toJson(type, plain) };
}
