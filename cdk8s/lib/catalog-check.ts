import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { isSettingName, settingSpec } from '../../core/config/settings';

interface Container {
  name: string;
  image?: string;
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: unknown } }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
}

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: { template?: { spec?: { containers?: Container[]; initContainers?: Container[] } } };
}

/**
 * Every variable a container of the service's image receives must be a setting of the catalog
 * (core/config/settings.ts), and a secret one only by reference to a Secret. Checked on the
 * rendered objects (JSON patches included), when the app is synthesized.
 */
export function catalogProblems(objects: Manifest[], isServiceImage: (image: string) => boolean): string[] {
  const problems: string[] = [];
  const configMaps = new Map(objects.filter((o) => o.kind === 'ConfigMap').map((o) => [o.metadata.name, o]));
  for (const o of objects) {
    const pod = o.spec?.template?.spec;
    if (!pod) continue;
    for (const c of [...(pod.initContainers ?? []), ...(pod.containers ?? [])]) {
      if (!c.image || !isServiceImage(c.image)) continue;
      const where = `container "${c.name}" of ${o.kind} ${o.metadata.namespace}/${o.metadata.name}`;
      const check = (name: string, how: 'value' | 'secret' | 'configmap') => {
        if (!isSettingName(name)) {
          problems.push(`${where} sets ${name}, which is not a setting of core/config/settings.ts`);
        } else if (settingSpec(name).secret && how !== 'secret') {
          problems.push(`${where} sets the secret setting ${name} from a ${how === 'value' ? 'literal value' : 'ConfigMap'}; use a secretKeyRef`);
        }
      };
      for (const e of c.env ?? []) check(e.name, e.valueFrom?.secretKeyRef ? 'secret' : 'value');
      for (const from of c.envFrom ?? []) {
        if (from.secretRef) problems.push(`${where} takes a whole Secret (${from.secretRef.name}); reference each secret setting by key`);
        const cm = from.configMapRef && configMaps.get(from.configMapRef.name);
        if (from.configMapRef && !cm) problems.push(`${where} reads ConfigMap ${from.configMapRef.name}, which the tenant does not define`);
        for (const key of Object.keys(cm?.data ?? {})) check(key, 'configmap');
      }
    }
  }
  return problems;
}

/** The rendered manifests under a construct. */
export function manifestsUnder(scope: IConstruct): Manifest[] {
  return scope.node.findAll().filter((c): c is ApiObject => c instanceof ApiObject).map((o) => o.toJson() as Manifest);
}
