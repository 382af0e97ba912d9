/**
 * How the store addresses what it keeps: an object's metadata, its type's key and its own key
 * within the type (`namespace/name`, empty namespace for cluster-scoped ones), and the current
 * time as objects record it.
 */
import type { Json } from './fields';
import type { ResourceType } from './resources';

export const typeKey = (t: Pick<ResourceType, 'group' | 'plural'>) => `${t.group}/${t.plural}`;
export const objKey = (ns: string | undefined, name: string) => `${ns ?? ''}/${name}`;
export const meta = (o: Json) => o.metadata as Json & { name: string; namespace?: string; labels?: Record<string, string> };

/** RFC 3339 to the second, as `creationTimestamp` and `deletionTimestamp` are written. */
export const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
