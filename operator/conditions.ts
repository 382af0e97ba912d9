import type { Condition, ConditionType } from '../cdk8s/lib/crd';

export interface ConditionInput {
  type: ConditionType;
  status: Condition['status'];
  reason: string;
  message: string;
}

/**
 * The next conditions, following the Kubernetes conventions: `lastTransitionTime` changes only
 * when a condition's status does; reason and message follow the latest observation; each
 * carries the generation it was computed for. Order is fixed, so an unchanged set compares equal.
 */
export function nextConditions(previous: Condition[] | undefined, inputs: ConditionInput[], generation: number, now: string): Condition[] {
  return inputs.map((c) => {
    const before = previous?.find((p) => p.type === c.type);
    return {
      type: c.type,
      status: c.status,
      reason: c.reason,
      message: c.message,
      lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime : now,
      observedGeneration: generation,
    };
  });
}

/** Conditions whose status changed: each is an Event. */
export function transitions(previous: Condition[] | undefined, next: Condition[]): Condition[] {
  return next.filter((c) => (previous?.find((p) => p.type === c.type)?.status ?? 'Unknown') !== c.status);
}
