/**
 * A provider's webhook sender, as Helius documents its own (https://www.helius.dev/docs/webhooks/faqs,
 * "Retries"; D-472): one delivery per block of the program's transactions, POSTed with the
 * configured `Authorization` value; a delivery the receiver does not take (a status other than
 * 2xx, no answer within the timeout, a connection error) is tried again up to 3 times, 1 s apart,
 * and then lost for good. Deliveries are not kept in order (each waits a random time before its
 * first attempt, so later ones overtake it), and one whose acknowledgement was lost is sent again:
 * a duplicate. The faults are drawn from the seed, so a run can be repeated: each delivery's are
 * drawn when it is sent, in the order of sending, so they do not depend on how its tries and
 * other deliveries' interleave in time.
 */
import type { RawTransaction } from '../core/events';
import { Random } from './traders/random';

export interface WebhookSenderOptions {
  url: string;
  /** The `Authorization` header's value, as the webhook was configured with. */
  authorization: string;
  seed: number;
  /** Tries of one delivery before it is dropped: the first and 3 retries. */
  attempts?: number;
  /** Between two tries of a delivery (Helius: 1 s). */
  retryDelayMs?: number;
  /** The receiver must answer within this (Helius: 1 s). */
  timeoutMs?: number;
  /** Share (0–1) of tries lost on the way: the sender sees a failure, the receiver nothing. */
  lossShare?: number;
  /** Share (0–1) of taken deliveries whose acknowledgement is lost, so the delivery is sent again. */
  duplicateShare?: number;
  /** Each delivery waits up to this long before its first try: deliveries arrive out of order. */
  maxDelayMs?: number;
}

export interface WebhookSenderStats {
  deliveries: number;
  /** Deliveries the receiver took (duplicates counted once). */
  delivered: number;
  /** Deliveries given up after every try failed. */
  dropped: number;
  /** Deliveries sent again after being taken. */
  duplicated: number;
  /** Tries that failed (lost, refused, unanswered). */
  failedTries: number;
}

export function createWebhookSender(opts: WebhookSenderOptions) {
  const rng = new Random(opts.seed);
  const attempts = opts.attempts ?? 4;
  const retryDelayMs = opts.retryDelayMs ?? 1_000;
  const timeoutMs = opts.timeoutMs ?? 1_000;
  const stats: WebhookSenderStats = { deliveries: 0, delivered: 0, dropped: 0, duplicated: 0, failedTries: 0 };
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let idleWaiters: (() => void)[] = [];

  const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  /** One try: true when the receiver took it (2xx). `lost`: drawn at sending, the try never arrives. */
  async function tryOnce(body: string, lost: boolean): Promise<boolean> {
    if (lost) return false;
    try {
      const res = await fetch(opts.url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: opts.authorization }, body, signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer();
      return res.status >= 200 && res.status < 300;
    } catch {
      return false;
    }
  }

  /** A delivery's faults, drawn from the seed when it is sent. */
  interface Plan { delayMs: number; lost: boolean[]; duplicate: boolean; duplicateLost: boolean }
  const draw = (): Plan => ({
    delayMs: opts.maxDelayMs ? rng.int(0, opts.maxDelayMs) : 0,
    lost: Array.from({ length: attempts }, () => Boolean(opts.lossShare && rng.chance(opts.lossShare))),
    duplicate: Boolean(opts.duplicateShare && rng.chance(opts.duplicateShare)),
    duplicateLost: Boolean(opts.lossShare && rng.chance(opts.lossShare)),
  });

  async function deliver(body: string, plan: Plan): Promise<void> {
    if (plan.delayMs) await wait(plan.delayMs);
    for (let n = 0; n < attempts && !stopped; n++) {
      if (n > 0) await wait(retryDelayMs);
      if (await tryOnce(body, plan.lost[n]!)) {
        stats.delivered++;
        if (plan.duplicate) {
          stats.duplicated++;
          await wait(retryDelayMs);
          await tryOnce(body, plan.duplicateLost);
        }
        return;
      }
      stats.failedTries++;
    }
    if (!stopped) stats.dropped++;
  }

  return {
    /** Sends one block's transactions of the program as one delivery (nothing for an empty block). */
    send(transactions: RawTransaction[]): void {
      if (!transactions.length || stopped) return;
      stats.deliveries++;
      const p: Promise<void> = deliver(JSON.stringify(transactions), draw()).finally(() => {
        inFlight.delete(p);
        if (!inFlight.size) {
          const waiters = idleWaiters;
          idleWaiters = [];
          for (const w of waiters) w();
        }
      });
      inFlight.add(p);
    },
    /** Resolves once every delivery sent so far has been taken or dropped. */
    idle: (): Promise<void> => (inFlight.size ? new Promise<void>((r) => idleWaiters.push(r)) : Promise.resolve()),
    stats: (): WebhookSenderStats => ({ ...stats }),
    /** Stops trying: deliveries under way are abandoned. */
    async close(): Promise<void> {
      stopped = true;
      await Promise.allSettled([...inFlight]);
    },
  };
}

export type WebhookSender = ReturnType<typeof createWebhookSender>;
