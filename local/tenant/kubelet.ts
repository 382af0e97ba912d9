import path from 'node:path';
import type { Container } from './manifests';

/**
 * What a kubelet does to a container before it starts it, done for a local process: the
 * environment resolved from literals, ConfigMaps and Secrets (refusing, as CreateContainerConfigError
 * does, what it cannot resolve), the image's command mapped to this checkout, and the volume
 * mounts mapped to local folders.
 */

/** Secrets as `kubectl create secret generic <name> --from-literal=<key>=<value>` makes them. */
export type SecretStore = Record<string, Record<string, string>>;

export class ContainerConfigError extends Error {
  override name = 'ContainerConfigError';
}

export interface EnvContext {
  namespace: string;
  configMaps: Record<string, Record<string, string>>;
  secrets: SecretStore;
  /** `fieldRef` values (metadata.name, status.podIP, …). */
  fields: Record<string, string>;
}

function lookup(kind: 'Secret' | 'ConfigMap', store: Record<string, Record<string, string>>, ns: string, name: string, key: string | undefined, optional = false): string | undefined {
  const obj = store[name];
  if (!obj) {
    if (optional) return undefined;
    throw new ContainerConfigError(`${kind.toLowerCase()} "${name}" not found`);
  }
  if (key === undefined) return undefined;
  if (!(key in obj)) {
    if (optional) return undefined;
    throw new ContainerConfigError(`couldn't find key ${key} in ${kind} ${ns}/${name}`);
  }
  return obj[key];
}

/** `$(NAME)` refers to a variable defined before it; `$$` escapes. Unknown references stay as written. */
const expand = (value: string, env: Record<string, string>) =>
  value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, name: string | undefined) => (m === '$$' ? '$' : name !== undefined && name in env ? env[name]! : m));

/** The container's environment: `envFrom` in order, then `env`, later entries winning, as the kubelet builds it. */
export function resolveEnv(c: Container, ctx: EnvContext): Record<string, string> {
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    const prefix = from.prefix ?? '';
    if (from.configMapRef) {
      lookup('ConfigMap', ctx.configMaps, ctx.namespace, from.configMapRef.name, undefined, from.configMapRef.optional);
      for (const [k, v] of Object.entries(ctx.configMaps[from.configMapRef.name] ?? {})) env[prefix + k] = v;
    }
    if (from.secretRef) {
      lookup('Secret', ctx.secrets, ctx.namespace, from.secretRef.name, undefined, from.secretRef.optional);
      for (const [k, v] of Object.entries(ctx.secrets[from.secretRef.name] ?? {})) env[prefix + k] = v;
    }
  }
  for (const e of c.env ?? []) {
    const from = e.valueFrom;
    let value: string | undefined;
    if (from?.secretKeyRef) value = lookup('Secret', ctx.secrets, ctx.namespace, from.secretKeyRef.name, from.secretKeyRef.key, from.secretKeyRef.optional);
    else if (from?.configMapKeyRef) value = lookup('ConfigMap', ctx.configMaps, ctx.namespace, from.configMapKeyRef.name, from.configMapKeyRef.key, from.configMapKeyRef.optional);
    else if (from?.fieldRef) value = ctx.fields[from.fieldRef.fieldPath];
    else value = expand(e.value ?? '', env);
    if (value !== undefined) env[e.name] = value;
  }
  return env;
}

/** A Service's names as its namespace's pods may write them. */
export const serviceHostNames = (service: string, namespace: string) => [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`];

/**
 * Cluster DNS for values: a Service's name in a URL (`http://market-indexer-chain:8899`,
 * `redis://user:pw@redis:6379`) becomes its local address. The harness has no resolver the
 * processes would ask, so it resolves the names where the processes read them.
 */
export function resolveServiceHosts(value: string, hosts: Record<string, string>): string {
  return value.replace(/(\/\/(?:[^/@\s]*@)?)([a-z0-9.-]+)(?=[:/]|$)/g, (m, before: string, host: string) => (host in hosts ? `${before}${hosts[host]}` : m));
}

/**
 * The image's command for this checkout: `node [flags] dist/<path>.js` runs as
 * `node [flags] --import tsx <path>.ts` from the sources, so a change runs without a build.
 */
export function localCommand(command: string[] | undefined, args: string[] | undefined, root: string, opts: { built?: boolean } = {}): { file: string; args: string[] } {
  const [bin, ...rest] = command ?? [];
  const entry = rest[rest.length - 1];
  if (bin !== 'node' || !entry || !/^dist\/.+\.js$/.test(entry)) {
    throw new ContainerConfigError(`the harness runs the image's node commands (node [flags] dist/<path>.js), not ${JSON.stringify(command)}`);
  }
  // A release built with its own `npm run build` (local/tenant/release.ts) runs its dist/ as the image does.
  if (opts.built) return { file: process.execPath, args: [...rest.slice(0, -1), path.join(root, entry), ...(args ?? [])] };
  const source = path.join(root, entry.replace(/^dist\//, '').replace(/\.js$/, '.ts'));
  return { file: process.execPath, args: [...rest.slice(0, -1), '--import', 'tsx', source, ...(args ?? [])] };
}

/** A mounted path in a value (DATA_DIR=/data) becomes the local folder that stands for the volume. */
export function mapMounts(value: string, mounts: Record<string, string>): string {
  for (const [mountPath, local] of Object.entries(mounts)) {
    if (value === mountPath || value.startsWith(`${mountPath}/`)) return local + value.slice(mountPath.length);
  }
  return value;
}
