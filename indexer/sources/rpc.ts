import { setMaxListeners } from 'node:events';
import type { Common } from '../../core/common';
import type { RawTransaction } from '../../core/events';
import { subscribeProgramLogs } from './logs-subscription';
import { createNotifiedPrefetch } from './notified-prefetch';
import { classifyRpcCode, createRpcClient, MAX_BATCH_CALLS, RpcError, type RpcClient } from './rpc-client';
import { whyUnavailable } from './missing-body';
import { createRpcLimiter, type RpcLimiter } from './rpc-limiter';
import type { AccountData, Cursor, Progress, Source } from './types';
import type { TransactionSink } from './webhook';

/** Tries of a body answered null that go again after 50 ms, before the backoff (D-476). */
const QUICK_BODY_TRIES = 10;

/** `getMultipleAccounts` takes at most 100 addresses a call. */
const ACCOUNTS_PER_CALL = 100;

interface RpcAccount {
  data: [string, 'base64'];
  owner: string;
}

interface SignatureInfo {
  signature: string;
  slot: number;
  err: unknown;
}

export interface RpcSourceOptions {
  common: Common;
  rpcUrl: string;
  wsUrl: string;
  programId: string;
  maxBatchTransactions?: number;
  /** How often the signature poll runs when nothing triggers it. */
  pollIntervalMs?: number;
  /** JSON-RPC requests in flight at once, whatever they are for (RPC_CONCURRENCY). */
  fetchConcurrency?: number;
  /** The provider's rate limit in credits/s (RPC_REQUESTS_PER_SECOND); 0 or unset: unpaced until a 429. */
  requestsPerSecond?: number;
  /** `getTransaction` calls per JSON-RPC batch (RPC_BATCH_SIZE); 1 or unset: single calls. */
  rpcBatchSize?: number;
  /** Disables logsSubscribe (the poll alone still finds everything). */
  subscribe?: boolean;
  /** How long one JSON-RPC call may take before it counts as failed and is retried. */
  requestTimeoutMs?: number;
  /** Signatures per `getSignaturesForAddress` page (the RPC's maximum, 1,000, by default). */
  pageSize?: number;
  /**
   * How many listed pages a poll keeps whole while it walks back to the cursor. Beyond that it
   * keeps only each page's boundary and lists the page again when its turn comes.
   */
  pagesInMemory?: number;
  /**
   * How long a listed signature's body may stay unserved (null) before the provider is asked
   * why and it is dead-lettered (D-463); 30 s by default.
   */
  bodyGiveUpMs?: number;
}

/** One `getSignaturesForAddress` page of a backlog: its signatures, or how to list them again. */
interface Window {
  /** Newest first, as listed; dropped for the newest pages of a long backlog. */
  sigs?: SignatureInfo[];
  /** The `before` it was listed with and its slot (absent for the newest page). */
  before?: { signature: string; slot: number };
  /** What a second listing must give again: as many signatures, ending on the same one. */
  count: number;
  oldest: string;
}

/**
 * Solana JSON-RPC source. One ordered path delivers transactions: the signature poll
 * (`getSignaturesForAddress`, newest first, `before`/`until`, 1,000 a page, confirmed) from
 * the last delivered signature, delivered in chain order a page at a time (D-64), each body
 * fetched with `getTransaction` (maxSupportedTransactionVersion 0). The first poll is the
 * backfill.
 * `logsSubscribe` notifications and webhook deliveries only trigger the poll early (webhook
 * bodies also spare the `getTransaction` calls; a notified signature's body is fetched while
 * the poll lists it, D-250), so a missed notification or a webhook gap never loses or reorders
 * a transaction.
 */
export function createRpcSource(opts: RpcSourceOptions): Source & TransactionSink & { rpc: RpcClient; limiter: RpcLimiter } {
  const { logger, metrics } = opts.common;
  const concurrency = opts.fetchConcurrency ?? 8;
  const limiter = createRpcLimiter({ requestsPerSecond: opts.requestsPerSecond, concurrency });
  const rpc = createRpcClient({ url: opts.rpcUrl, logger, metrics, timeoutMs: opts.requestTimeoutMs, limiter });
  // The chain-tip heartbeat's own client, outside the limiter: one getSlot a heartbeat must not
  // queue behind a backlog of slow history calls holding every slot, or its 2 s deadline passes,
  // the tip goes stale and the indexer reports no lag while it falls behind.
  const tipRpc = createRpcClient({ url: opts.rpcUrl, logger, metrics, timeoutMs: opts.requestTimeoutMs });
  const maxBatch = opts.maxBatchTransactions ?? 2_000;
  const pollMs = opts.pollIntervalMs ?? 2_000;
  // Until the provider refuses batches (D-242); never more than a provider takes (D-474).
  let rpcBatch = Math.min(MAX_BATCH_CALLS, Math.max(1, opts.rpcBatchSize ?? 1));
  const pageSize = opts.pageSize ?? 1_000;
  const pagesInMemory = Math.max(1, opts.pagesInMemory ?? 100);
  const bodyGiveUpMs = opts.bodyGiveUpMs ?? 30_000;
  const bodies = new Map<string, RawTransaction>();
  let trigger: (() => void) | undefined;
  let pending = false;
  let tip: number | null = null;
  let progress: Progress | undefined;
  let subscription: { close(): void } | undefined;
  // Bodies of notified signatures, fetched while the poll they trigger lists them (D-250).
  const prefetch = createNotifiedPrefetch({
    // The poll's getTransaction options (fetchBodies); given up after 10 s, leaving it to the poll.
    fetch: (signature, signal) =>
      rpc.call<RawTransaction | null>(
        'getTransaction',
        [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }],
        AbortSignal.any([signal, AbortSignal.timeout(10_000)]),
      ),
    maxInFlight: concurrency,
    maxHeld: 1_000,
  });

  const wake = () => {
    pending = true;
    trigger?.();
  };

  // The newest slot any answer has shown (the chain tip, a listed or notified signature, the
  // cursor): every listing asks for a node that has reached it (D-461). A node of a provider's
  // pool that lags answers `[]` for a `before` it has not confirmed and ignores such an
  // `until`, so a page from it would end the walk early or run it below the cursor; with
  // `minContextSlot` it refuses instead (-32016), and the call goes again, to another node.
  let seen = 0;
  const saw = (slot: number | null | undefined) => {
    if (typeof slot === 'number' && slot > seen) seen = slot;
  };

  // A page below `before` needs only a node that has confirmed `before`'s slot: all it lists
  // is older, and the same on every node; the newest page needs one at `seen` (D-476).
  const listPage = (before: { signature: string; slot: number } | undefined, until: string | null, signal: AbortSignal) => {
    const cfg: Record<string, unknown> = { limit: pageSize, commitment: 'confirmed' };
    if (before) cfg.before = before.signature;
    if (until) cfg.until = until;
    const min = before ? before.slot : seen;
    if (min > 0) cfg.minContextSlot = min;
    return rpc.call<SignatureInfo[]>('getSignaturesForAddress', [opts.programId, cfg], signal);
  };

  /**
   * Every signature newer than `until`, oldest first, a page at a time. The RPC lists newest
   * first, so the whole backlog is walked before its oldest page can go out; a walk back over a
   * long history (a first backfill) would hold every signature of it, so past `pagesInMemory`
   * pages only their boundaries are kept and those pages are listed again on the way forward.
   */
  async function* backlog(until: string | null, untilSlot: number, signal: AbortSignal): AsyncGenerator<SignatureInfo[]> {
    saw(untilSlot);
    const windows: Window[] = [];
    // What a node lists below the cursor's slot (it ignored an `until` it lacks) is history the
    // indexer has: cut off, and the walk ends there (D-462).
    let reachedCursor = false;
    const aboveCursor = (page: SignatureInfo[]) => {
      const keep = page.findIndex((s) => s.slot < untilSlot || s.signature === until);
      if (keep < 0) return page;
      reachedCursor = true;
      return page.slice(0, keep);
    };
    let listed = 0;
    // The newest pages go out last, so they are the ones dropped and listed again, newest
    // first. Not the newest of all: listed again, it would also hold what arrived since.
    let nextDrop = 1;
    let before: { signature: string; slot: number } | undefined;
    for (;;) {
      const listed0 = await listPage(before, until, signal);
      const page = aboveCursor(listed0);
      if (!page.length) break;
      saw(page[0]!.slot);
      prefetch.listed(page[0]!.slot);
      windows.push({ sigs: page, before, count: page.length, oldest: page[page.length - 1]!.signature });
      listed += page.length;
      if (windows.length - nextDrop + 1 > pagesInMemory && nextDrop < windows.length) windows[nextDrop++]!.sigs = undefined;
      // Short from a node at or past `seen`: nothing older to list (or the cursor is reached).
      if (listed0.length < pageSize || reachedCursor) break;
      before = { signature: page[page.length - 1]!.signature, slot: page[page.length - 1]!.slot };
    }
    progress = { done: 0, total: listed, unit: 'transactions' };
    for (let i = windows.length - 1; i >= 0; i--) {
      const w = windows[i]!;
      let sigs = w.sigs;
      for (let attempt = 0; !sigs; attempt++) {
        const again = aboveCursor(await listPage(w.before, until, signal));
        if (again.length === w.count && again[again.length - 1]?.signature === w.oldest) sigs = again;
        // Confirmed history does not change; if it did, stop rather than skip or repeat. One
        // node's answer is not the provider's: asked a few times first (D-462).
        else if (attempt >= 4) throw new Error(`getSignaturesForAddress before ${w.before?.signature} no longer lists the page it listed`);
        else await new Promise((r) => setTimeout(r, 200 * 2 ** attempt));
        if (signal.aborted) return;
      }
      w.sigs = undefined;
      yield sigs.reverse();
    }
  }

  const getTransactionParams = (signature: string) => [signature, { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' }];

  /**
   * The bodies of `signatures`: null where the RPC does not serve one yet, the error where it
   * says it never will (D-463); one batch, or single calls.
   */
  async function getTransactions(signatures: string[], signal: AbortSignal): Promise<(RawTransaction | RpcError | null)[]> {
    if (rpcBatch > 1 && signatures.length > 1) {
      try {
        const answers = await rpc.batch<RawTransaction | null>('getTransaction', signatures.map(getTransactionParams), signal);
        return answers.map((a) => {
          if (!(a instanceof RpcError)) return a;
          // A call the batch failed is asked again; one that can never succeed fails the poll,
          // as a single call would; one whose item will never be served is that item's answer.
          const cls = classifyRpcCode(a.code);
          if (cls === 'permanent') throw a;
          return cls === 'unavailable' ? a : null;
        });
      } catch (err) {
        if (!(err instanceof RpcError) || err.kind !== 'batch_refused') throw err;
        if (rpcBatch > 1) logger.warn({ err: err.message }, 'the RPC refuses JSON-RPC batches: single getTransaction calls from now on');
        rpcBatch = 1;
      }
    }
    return Promise.all(
      signatures.map((sig) =>
        rpc.call<RawTransaction | null>('getTransaction', getTransactionParams(sig), signal).catch((err: unknown) => {
          if (err instanceof RpcError && err.kind === 'rpc' && classifyRpcCode(err.code) === 'unavailable') return err;
          throw err;
        }),
      ),
    );
  }

  /**
   * The bodies of `sigs`, in their order. `issued` settles once every call is under way (each
   * body asked for at least once), so the chunk after it can wait for that instead of sharing
   * the limiter with it from the start: the first commit then comes after one chunk's calls,
   * not two (D-244). `after` is the chunk before's `issued`.
   */
  function fetchBodies(sigs: SignatureInfo[], signal: AbortSignal, after?: Promise<void>): { txs: Promise<RawTransaction[]>; issued: Promise<void> } {
    let markIssued!: () => void;
    const issued = new Promise<void>((resolve) => (markIssued = resolve));
    const txs = fetchInOrder(sigs, signal, after, markIssued).finally(markIssued);
    return { txs, issued };
  }

  async function fetchInOrder(sigs: SignatureInfo[], signal: AbortSignal, after: Promise<void> | undefined, markIssued: () => void): Promise<RawTransaction[]> {
    const out = new Array<RawTransaction>(sigs.length);
    const todo: number[] = [];
    const notified: Promise<void>[] = [];
    for (let i = 0; i < sigs.length; i++) {
      const cached = bodies.get(sigs[i]!.signature);
      if (cached) {
        bodies.delete(sigs[i]!.signature);
        out[i] = cached;
        continue;
      }
      // A notified signature's body already on its way (D-250): taken, not asked again.
      const early = prefetch.take(sigs[i]!.signature, signal);
      if (early) notified.push(early.then((tx) => void (tx ? (out[i] = tx) : todo.push(i))));
      else todo.push(i);
    }
    // In flight already, so short; one that failed joins the rest.
    await Promise.all(notified);
    await after;
    if (signal.aborted) return out;
    let next = 0;
    // The client's limiter caps the requests in flight; the workers only keep it busy.
    const worker = async () => {
      while (next < todo.length && !signal.aborted) {
        let pending = todo.slice(next, next + Math.min(rpcBatch, rpc.batchLimit()));
        next += pending.length;
        if (next >= todo.length) markIssued();
        // A confirmed signature whose body is not served yet (a node without its slot): asked
        // again, with backoff, for `bodyGiveUpMs`; then, or at once where the RPC says it never
        // will be, the provider is asked why and it goes to the projection as a dead letter
        // (D-463), never held forever.
        const since = performance.now();
        for (let attempt = 0; pending.length; attempt++) {
          const got = await getTransactions(pending.map((i) => sigs[i]!.signature), signal);
          if (signal.aborted) return;
          const refused: { i: number; cause: RpcError }[] = [];
          pending = pending.filter((i, k) => {
            const g = got[k];
            if (g instanceof RpcError) refused.push({ i, cause: g });
            else if (g) out[i] = g;
            return !g;
          });
          const waited = performance.now() - since;
          const givenUp = [...refused, ...(waited >= bodyGiveUpMs ? pending.map((i) => ({ i, cause: undefined })) : [])];
          if (givenUp.length) {
            const standIns = await whyUnavailable(rpc, givenUp.map((g) => ({ signature: sigs[g.i]!.signature, slot: sigs[g.i]!.slot, cause: g.cause })), waited, signal);
            givenUp.forEach((g, k) => (out[g.i] = standIns[k]!));
            for (const s of standIns) logger.warn({ signature: s.transaction.signatures[0], slot: s.slot, ...s.unavailable }, 'a listed transaction\'s body never came: dead-lettered');
            if (waited >= bodyGiveUpMs) pending = [];
          }
          // A null is most often a node of the pool a few slots behind (D-476): the next call
          // likely reaches another, so the first tries come soon; then the backoff of D-463.
          if (pending.length) await new Promise((r) => setTimeout(r, attempt < QUICK_BODY_TRIES ? 50 : Math.min(2_000, 100 * 2 ** (attempt - QUICK_BODY_TRIES))));
        }
      }
    };
    const workers = Math.min(concurrency, Math.ceil(todo.length / Math.min(rpcBatch, rpc.batchLimit())));
    await Promise.all(Array.from({ length: workers }, worker));
    return out;
  }

  return {
    name: 'rpc',
    rpc,
    limiter,
    offer(transactions) {
      for (const tx of transactions) {
        const sig = tx.transaction.signatures[0];
        if (sig) bodies.set(sig, tx);
      }
      // Webhook bodies for signatures the poll never lists again would pile up: keep it bounded.
      if (bodies.size > 50_000) bodies.clear();
      wake();
    },
    async readAccounts(addresses, signal) {
      const out: (AccountData | null)[] = [];
      for (let i = 0; i < addresses.length; i += ACCOUNTS_PER_CALL) {
        const chunk = addresses.slice(i, i + ACCOUNTS_PER_CALL);
        const res = await rpc.call<{ context: { slot: number }; value: (RpcAccount | null)[] }>(
          'getMultipleAccounts',
          [chunk, { encoding: 'base64', commitment: 'confirmed' }],
          signal,
        );
        for (const a of res.value) {
          out.push(a ? { data: new Uint8Array(Buffer.from(a.data[0], 'base64')), owner: a.owner, slot: res.context.slot } : null);
        }
      }
      return out;
    },
    async *batches(from: Cursor, signal: AbortSignal) {
      let last = from.lastSignature;
      let lastSlot = from.lastSlot;
      if (opts.subscribe !== false) {
        subscription = subscribeProgramLogs({
          wsUrl: opts.wsUrl,
          programId: opts.programId,
          logger,
          onNotification: (signature, slot, err) => {
            saw(slot);
            prefetch.notified(signature, slot, err);
            wake();
          },
        });
      }
      const onAbort = () => trigger?.();
      signal.addEventListener('abort', onAbort);
      // Each request in flight and each caller waiting on the limiter listens to it, up to a
      // few times the concurrency (the chunk being fetched and the one ahead).
      setMaxListeners(4 * concurrency + 10, signal);
      try {
        while (!signal.aborted) {
          pending = false;
          // Signatures listed and not yet delivered, oldest first; failed transactions are not
          // fetched, but the poll moves past them.
          let queue: SignatureInfo[] = [];
          // The next chunk's bodies are fetched while the indexer takes the one before (its
          // fetch would otherwise wait for the indexer to ask); the limiter keeps the two
          // fetches within the concurrency between them.
          let ahead: { chunk: SignatureInfo[]; txs: Promise<RawTransaction[]>; issued: Promise<void> } | undefined;
          const handOver = async function* () {
            if (!ahead) return;
            const { chunk, txs } = ahead;
            ahead = undefined;
            const got = await txs;
            if (signal.aborted) return;
            if (got.length) yield got;
            if (progress) progress.done += chunk.length;
            last = chunk[chunk.length - 1]!.signature;
            lastSlot = chunk[chunk.length - 1]!.slot;
          };
          const deliver = async function* (all: boolean) {
            while (queue.length >= maxBatch || (all && queue.length)) {
              const chunk = queue.slice(0, maxBatch);
              queue = queue.slice(chunk.length);
              const live = chunk.filter((s) => s.err === null || s.err === undefined);
              // Its calls queue behind those of the chunk being fetched (D-244).
              const { txs, issued } = live.length ? fetchBodies(live, signal, ahead?.issued) : { txs: Promise.resolve([]), issued: Promise.resolve() };
              txs.catch(() => {}); // surfaced when handed over
              yield* handOver();
              if (signal.aborted) return;
              ahead = { chunk, txs, issued };
            }
            if (all) yield* handOver();
          };
          try {
            for await (const page of backlog(last, last ? lastSlot : 0, signal)) {
              queue.push(...page);
              yield* deliver(false);
              if (signal.aborted) break;
            }
            if (!signal.aborted) yield* deliver(true);
            prefetch.forgetListed();
          } catch (err) {
            if (signal.aborted) break;
            throw err;
          }
          if (signal.aborted) break;
          if (!pending) {
            await new Promise<void>((resolve) => {
              const t = setTimeout(resolve, pollMs);
              trigger = () => {
                clearTimeout(t);
                resolve();
              };
            });
            trigger = undefined;
          }
        }
      } finally {
        signal.removeEventListener('abort', onAbort);
        subscription?.close();
      }
    },
    async chainTip() {
      const slot = await tipRpc.call<number>('getSlot', [{ commitment: 'confirmed' }], AbortSignal.timeout(2_000));
      tip = slot;
      saw(slot);
      return tip;
    },
    connected: () => rpc.connected(),
    progress: () => progress,
    close: async () => {
      subscription?.close();
      prefetch.close();
      trigger?.();
      rpc.close();
      tipRpc.close();
    },
  };
}
