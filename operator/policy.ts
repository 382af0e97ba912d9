import { TENANT_DEFAULTS } from '../cdk8s/lib/defaults';
import { deepMerge } from '../cdk8s/lib/resolve';
import type { TenantInput, TenantValues } from '../cdk8s/lib/values';

export interface IpBlock {
  cidr: string;
  except?: string[];
}

/**
 * What a MarketIndexer may ask for, beyond what the environment states for every tenant (D-200):
 * writing one must not be a way to read that tenant's Secrets (an image of one's choosing gets
 * them as environment variables; an egress rule of one's choosing lets them out).
 */
export interface SpecPolicy {
  /** Image repositories (without tag or digest) a spec may name. */
  imageRepositories: string[];
  /** Address blocks a spec's egress rules may open, each inside one of these. */
  egressBlocks: IpBlock[];
}

/** The repository of an image reference: without `:tag` or `@digest` (a registry port stays). */
export function repositoryOf(image: string): string {
  const noDigest = image.split('@')[0]!;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  return colon > slash ? noDigest.slice(0, colon) : noDigest;
}

/**
 * The policy in force: what the environment's defaults file states, plus the images the
 * environment itself runs (its image and dev stores' images are always allowed).
 */
export function effectivePolicy(stated: Partial<SpecPolicy> | undefined, environment: TenantInput): SpecPolicy {
  const env = deepMerge(structuredClone(TENANT_DEFAULTS), environment) as TenantValues;
  const own = [env.image.repository, repositoryOf(env.devStores.postgresImage), repositoryOf(env.devStores.redisImage)];
  return {
    imageRepositories: [...new Set([...own, ...(stated?.imageRepositories ?? [])])],
    egressBlocks: stated?.egressBlocks ?? [],
  };
}

/** An address block as [bits, first address, prefix length]. */
function parseCidr(cidr: string): { bits: number; base: bigint; prefix: number } | undefined {
  const [addr, len] = cidr.split('/');
  const prefix = Number(len);
  if (addr === undefined || !Number.isInteger(prefix)) return undefined;
  let bits: number;
  let value = 0n;
  if (addr.includes(':')) {
    bits = 128;
    const [head, tail] = addr.split('::') as [string, string | undefined];
    const h = head ? head.split(':') : [];
    const t = tail ? tail.split(':') : [];
    if (addr.includes('::') ? h.length + t.length > 7 : h.length !== 8) return undefined;
    const groups = addr.includes('::') ? [...h, ...Array(8 - h.length - t.length).fill('0'), ...t] : h;
    for (const g of groups) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
      value = (value << 16n) | BigInt(parseInt(g, 16));
    }
  } else {
    bits = 32;
    const octets = addr.split('.');
    if (octets.length !== 4) return undefined;
    for (const o of octets) {
      const n = Number(o);
      if (!/^\d{1,3}$/.test(o) || n > 255) return undefined;
      value = (value << 8n) | BigInt(n);
    }
  }
  if (prefix < 0 || prefix > bits) return undefined;
  const host = (1n << BigInt(bits - prefix)) - 1n;
  return { bits, base: value & ~host, prefix };
}

/** Whether block `inner` lies inside block `outer` (same address family). */
function within(inner: string, outer: string): boolean {
  const a = parseCidr(inner);
  const b = parseCidr(outer);
  if (!a || !b || a.bits !== b.bits || a.prefix < b.prefix) return false;
  const host = (1n << BigInt(b.bits - b.prefix)) - 1n;
  return (a.base & ~host) === b.base;
}

const overlaps = (x: string, y: string) => within(x, y) || within(y, x);

/** Whether a spec's block opens only addresses an allowed block opens. */
function allowedBy(block: IpBlock, allowed: IpBlock): boolean {
  if (!within(block.cidr, allowed.cidr)) return false;
  // What the allowed block leaves out stays out: each such range that the spec's block reaches
  // must be left out by the spec's block too.
  return (allowed.except ?? []).every((e) => !overlaps(e, block.cidr) || (block.except ?? []).some((own) => within(e, own)));
}

type Json = Record<string, unknown>;
const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * What a MarketIndexer's spec asks for outside the policy, each problem naming its field in the
 * spec (`spec.image.repository: …`); empty when it asks for nothing the environment does not allow.
 */
export function specPolicyProblems(spec: unknown, policy: SpecPolicy): string[] {
  const problems: string[] = [];
  const s = isMap(spec) ? spec : {};
  const allowedImages = policy.imageRepositories.join(', ');
  const checkImage = (field: string, image: unknown) => {
    if (typeof image !== 'string') return;
    const repo = repositoryOf(image);
    if (!policy.imageRepositories.includes(repo)) problems.push(`spec.${field}: image repository "${repo}" is not allowed here (allowed: ${allowedImages})`);
  };
  const image = isMap(s.image) ? s.image : {};
  checkImage('image.repository', image.repository);
  const dev = isMap(s.devStores) ? s.devStores : {};
  checkImage('devStores.postgresImage', dev.postgresImage);
  checkImage('devStores.redisImage', dev.redisImage);

  const np = isMap(s.networkPolicy) ? s.networkPolicy : {};
  if (np.enabled === false) problems.push('spec.networkPolicy.enabled: a MarketIndexer may not turn its NetworkPolicies off');
  const egress = isMap(np.egress) ? np.egress : {};
  const allowedBlocks = policy.egressBlocks.length
    ? policy.egressBlocks.map((b) => b.cidr + (b.except?.length ? ` except ${b.except.join(' ')}` : '')).join(', ')
    : 'none: the environment states every egress block';
  for (const [dest, d] of Object.entries(egress)) {
    const blocks = isMap(d) && Array.isArray(d.ipBlocks) ? (d.ipBlocks as IpBlock[]) : [];
    blocks.forEach((b, i) => {
      if (!policy.egressBlocks.some((a) => allowedBy(b, a))) {
        problems.push(`spec.networkPolicy.egress.${dest}.ipBlocks[${i}]: ${b.cidr} is outside the egress blocks a MarketIndexer may open (allowed: ${allowedBlocks})`);
      }
    });
  }
  return problems;
}
