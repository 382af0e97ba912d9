/** Kubernetes resource quantities ("250m", "1.5", "512Mi") as numbers of base units. */
const SUFFIX: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
};

export function parseQuantity(q: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/.exec(q);
  if (!m) throw new Error(`not a resource quantity: ${q}`);
  return Number(m[1]) * SUFFIX[m[2] ?? '']!;
}
