import type { KindInfo } from '../../cdk8s/lib/kinds';

/** The REST path of a collection or an object. */
export function pathOf(info: KindInfo, namespace?: string, name?: string, subresource?: string): string {
  const base = info.group ? `/apis/${info.group}/${info.version}` : `/api/${info.version}`;
  const ns = info.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  return `${base}${ns}/${info.plural}${name ? `/${encodeURIComponent(name)}` : ''}${subresource ? `/${subresource}` : ''}`;
}
