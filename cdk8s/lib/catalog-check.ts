import { ApiObject } from 'cdk8s';
import type { IConstruct } from 'constructs';
import { IMAGE } from '../../core/constants';
import { isSettingName, requiredSettings, settingSpec, SOURCE_TYPES, type SourceType } from '../../core/config/settings';

interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: { name: string; value?: string; valueFrom?: { secretKeyRef?: unknown } }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
}

interface Manifest {
  kind: string;
  metadata: { name: string; namespace?: string };
  data?: Record<string, string>;
  spec?: { template?: { spec?: { containers?: Container[]; initContainers?: Container[] } } };
}

type Process = keyof typeof IMAGE.commands;

/** A command with its heap cap's value left out: the operator's is sized from its memory limit (D-420). */
const withoutHeapCap = (command: readonly string[] | undefined) => JSON.stringify(command?.map((a) => a.replace(/^(--max-old-space-size=).*$/, '$1')));

/** Which of the image's processes a container runs: its command is that process's. */
export function processOf(c: Pick<Container, 'command'>): Process | undefined {
  return (Object.keys(IMAGE.commands) as Process[]).find((p) => withoutHeapCap(IMAGE.commands[p]) === withoutHeapCap(c.command));
}

/** The indexer's source, from its `--source` argument (the process's own default: rpc). */
export function sourceOf(c: Pick<Container, 'args'>): SourceType {
  const i = c.args?.indexOf('--source') ?? -1;
  const s = i >= 0 ? c.args![i + 1] : 'rpc';
  return (SOURCE_TYPES as readonly string[]).includes(s!) ? (s as SourceType) : 'rpc';
}

/**
 * Every variable a container of the service's image receives must be a setting of the catalog
 * (core/config/settings.ts), and a secret one only by reference to a Secret; and it must
 * receive every setting its process needs given (the catalog's `requiredBy`, for the indexer's
 * source), so a tenant cannot deploy a process that would refuse to start or answer 503
 * (D-210). Checked on the rendered objects (JSON patches included), when the app is synthesized.
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
      const given = new Set<string>();
      for (const e of c.env ?? []) {
        check(e.name, e.valueFrom?.secretKeyRef ? 'secret' : 'value');
        given.add(e.name);
      }
      for (const from of c.envFrom ?? []) {
        if (from.secretRef) problems.push(`${where} takes a whole Secret (${from.secretRef.name}); reference each secret setting by key`);
        const cm = from.configMapRef && configMaps.get(from.configMapRef.name);
        if (from.configMapRef && !cm) problems.push(`${where} reads ConfigMap ${from.configMapRef.name}, which the tenant does not define`);
        for (const key of Object.keys(cm?.data ?? {})) {
          check(key, 'configmap');
          given.add(key);
        }
      }
      const process = processOf(c);
      if (process && process !== 'operator' && process !== 'check') {
        const missing = requiredSettings(process, sourceOf(c)).filter((n) => !given.has(n));
        if (missing.length) problems.push(`${where} runs the ${process}${process === 'indexer' ? ` (--source ${sourceOf(c)})` : ''} without ${missing.join(', ')}, which it needs (core/config/settings.ts requiredBy)`);
      }
    }
  }
  return problems;
}

/** The rendered manifests under a construct. */
export function manifestsUnder(scope: IConstruct): Manifest[] {
  return scope.node.findAll().filter((c): c is ApiObject => c instanceof ApiObject).map((o) => o.toJson() as Manifest);
}
