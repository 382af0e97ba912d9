import type { Manifest } from './kit';

type Secret = Manifest & { stringData: Record<string, string> };
type StatefulSet = Manifest & {
  spec: {
    template: {
      metadata: { annotations?: Record<string, string> };
      spec: {
        containers: { args: string[]; livenessProbe: { exec: { command: string[] } }; volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[];
        volumes: { name: string; secret?: { secretName: string; items: { key: string; path: string }[] } }[];
      };
    };
  };
};

/** What a tenant's dev Redis is given, read from the rendered objects (independent of how the kit builds them). */
export function renderedDevRedis(objects: Manifest[], tenant: string) {
  const ns = `mi-${tenant}`;
  const secret = (name: string) => objects.find((o) => o.kind === 'Secret' && o.metadata.namespace === ns && o.metadata.name === name) as Secret | undefined;
  const redis = objects.find((o) => o.kind === 'StatefulSet' && o.metadata.namespace === ns && o.metadata.name === 'redis') as StatefulSet;
  const pod = redis.spec.template.spec;
  const [container] = pod.containers;
  const args = container!.args;
  const aclPath = args[args.indexOf('--aclfile') + 1]!;
  // The file at that path: a Secret key mounted into the folder.
  const mount = container!.volumeMounts.find((m) => aclPath.startsWith(`${m.mountPath}/`))!;
  const volume = pod.volumes.find((v) => v.name === mount.name)!;
  const item = volume.secret!.items.find((i) => `${mount.mountPath}/${i.path}` === aclPath)!;
  const api = objects.find((o) => o.kind === 'Deployment' && o.metadata.namespace === ns && o.metadata.name === 'market-indexer-api') as unknown as {
    spec: { template: { spec: { containers: { name: string; env?: { name: string; valueFrom?: { secretKeyRef?: { name: string; key: string } } }[] }[] } } };
  };
  const ref = api.spec.template.spec.containers.find((c) => c.name === 'api')!.env!.find((e) => e.name === 'REDIS_URL')!.valueFrom!.secretKeyRef!;
  return {
    args,
    aclPath,
    aclFile: secret(volume.secret!.secretName)!.stringData[item.key]!,
    adminPassword: secret(volume.secret!.secretName)!.stringData.REDIS_ADMIN_PASSWORD!,
    redisUrl: secret(ref.name)!.stringData[ref.key]!,
    annotations: redis.spec.template.metadata.annotations ?? {},
    liveness: container!.livenessProbe.exec.command,
    readOnly: mount.readOnly,
  };
}
