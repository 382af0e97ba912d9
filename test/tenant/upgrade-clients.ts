import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createDatabase, type Db } from '../../core/db';
import { inSchema } from '../../core/db/projection-schema';
import { createProjector } from '../../indexer/projection';
import type { Pod } from '../../local/tenant/pod';
import { MarketSimulator } from '../../simulator/simulation';
import { keyPairOf } from '../../simulator/ids';
import type { Json } from '../support/api';
import { createStandaloneDatabase } from '../support/pg';
import { tableDigests } from '../support/tables';
import { createKeypairSigner, type Signer } from '../../client/src';
import { resumingWsClient } from '../support/resuming-ws';
import { WsClient, wsAuth } from '../support/ws';

/** What the upgrade journey (upgrade.test.ts) runs beside a rollout, and how it judges it. */

/** A client reading through the Ingress in a loop: every answer that is not a 200 is a failure. */
export function steadyReader(url: string) {
  let running = true;
  let ok = 0;
  const failures: string[] = [];
  const done = (async () => {
    while (running) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(60_000) });
        const body = await res.text();
        if (res.status === 200) ok += 1;
        else failures.push(`${new Date().toISOString()} ${res.status} ${body.slice(0, 200)}`);
      } catch (err) {
        failures.push(`${new Date().toISOString()} ${String((err as Error).cause ?? err)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return { ok: () => ok, failures, stop: async () => ((running = false), await done) };
}

export interface ChannelTally {
  channel: string;
  received: number;
  duplicates: number;
  gaps: number;
}

/**
 * The journey's /ws client: the SDK's (test/support/resuming-ws.ts: it reconnects through the
 * Ingress and resumes each channel; the positions channel signed by its wallet on every
 * subscribe), tallying what it yields and what it reports: updates, each seq's data, the seqs it
 * dropped as received already (on which connections) and the seqs it found missing.
 */
export function resumingClient(wsUrl: string, channels: string[], auth: PositionsAuth | (() => undefined)) {
  const sdk = 'sdk' in auth ? auth.sdk : undefined;
  const wallet = channels.find((c) => c.startsWith('positions:'))?.slice('positions:'.length);
  const o = { domain: sdk?.domain, chain: sdk?.chain, signer: wallet && sdk ? sdk.signerOf(wallet) : undefined };
  const received = new Map<string, number>(channels.map((c) => [c, 0]));
  const duplicates = new Map<string, number>(channels.map((c) => [c, 0]));
  const missing = new Map<string, number>(channels.map((c) => [c, 0]));
  /** Which connection delivered each seq first, to tell a repeat on one socket from one on two. */
  const deliveredBy = new Map<string, Map<number, number>>(channels.map((c) => [c, new Map()]));
  const repeats: string[] = [];
  const data = new Map<string, Map<number, unknown>>(channels.map((c) => [c, new Map()]));
  const last = new Map<string, number>();
  const client = resumingWsClient(wsUrl, channels, {
    ...o,
    onUpdate: (u, connection) => {
      const prev = last.get(u.channel);
      // The SDK yields a gap as a reset before the update; counted here by how many seqs it skipped.
      if (prev !== undefined && u.seq > prev + 1) missing.set(u.channel, missing.get(u.channel)! + u.seq - prev - 1);
      last.set(u.channel, u.seq);
      received.set(u.channel, received.get(u.channel)! + 1);
      deliveredBy.get(u.channel)!.set(u.seq, connection);
      data.get(u.channel)!.set(u.seq, u.data);
    },
    onDuplicate: (channel, seq, connection) => {
      duplicates.set(channel, duplicates.get(channel)! + 1);
      repeats.push(`${channel} seq ${seq}: connection ${deliveredBy.get(channel)!.get(seq)} then ${connection}`);
    },
  });
  return {
    connect: () => client.connect(),
    last: client.last,
    dataAt: (channel: string, seq: number) => data.get(channel)!.get(seq),
    reconnects: client.reconnects,
    /** Connections that subscribed again with `resumeFrom`. */
    resumes: client.resumes,
    failedConnects: client.failedConnects,
    /** Times a new socket opened while an earlier one of this client was still open (must stay 0). */
    overlaps: client.overlaps,
    errors: client.errors,
    /** Each seq received again: on which connections (the same one twice is the server's doing). */
    repeats,
    /** Per channel: updates received, the same seq twice, seqs missing between the first and the last. */
    tally: (): ChannelTally[] => channels.map((channel) => ({ channel, received: received.get(channel)!, duplicates: duplicates.get(channel)!, gaps: missing.get(channel)! })),
    stop: client.stop,
  };
}
export type ResumingClient = ReturnType<typeof resumingClient>;

/** A hand-written subscribe's `auth`, carrying what the SDK client signs with instead. */
export type PositionsAuth = ((channel: string) => Json | undefined) & { sdk: { domain: string; chain: string; signerOf: (wallet: string) => Signer } };

/** The signed `auth` a positions subscription needs, from the simulated chain's own wallets' keys. */
export function positionsSigner(opts: { seed: number; domain: string; chain: string }) {
  const keys = new Map(Array.from({ length: 40 }, (_, i) => keyPairOf(`wallet:${opts.seed}:${i}`)).map((k) => [k.address, k]));
  /** An SDK signer over a wallet's key (WebCrypto's import is async: done at the first signature). */
  const signerOf = (wallet: string): Signer => {
    let key: Promise<Signer> | undefined;
    return { publicKey: wallet, signMessage: async (bytes) => (await (key ??= createKeypairSigner(keys.get(wallet)!.secretKey))).signMessage(bytes) };
  };
  const sign = (channel: string): Json | undefined => {
    if (!channel.startsWith('positions:')) return undefined;
    const key = keys.get(channel.slice('positions:'.length))!;
    return wsAuth(key, `WS_SUBSCRIBE ${channel}`, { domain: opts.domain, chain: opts.chain });
  };
  return {
    wallets: [...keys.keys()],
    /** A signed `auth` for a hand-written subscribe (storedUpdate's probe); `resumingClient` takes it and signs with the SDK. */
    sign: Object.assign(sign, { sdk: { domain: opts.domain, chain: opts.chain, signerOf } }) as PositionsAuth,
  };
}

/**
 * A channel's latest update as the stream keeps it, read by a client that never moved: a fresh
 * socket that subscribes with `resumeFrom` a seq the clients have, and reads the replay up to the
 * channel's latest seq.
 */
export async function storedUpdate(wsUrl: string, channel: string, from: number, auth: Json | undefined): Promise<{ latestSeq: number; data: unknown }> {
  const probe = await WsClient.open(wsUrl);
  try {
    await probe.next((m) => m.type === 'connected');
    const r = await probe.request({ type: 'subscribe', channel, resumeFrom: from, ...(auth ? { auth } : {}) });
    if (r.resumed !== true) throw new Error(`${channel}: seq ${from} is no longer kept (${JSON.stringify(r)})`);
    const latestSeq = Math.max(from, r.latestSeq as number);
    if (latestSeq === from) return { latestSeq, data: undefined };
    const m = await probe.next((x) => x.type === 'update' && x.channel === channel && x.seq === latestSeq);
    return { latestSeq, data: m.data };
  } finally {
    probe.ws.terminate();
  }
}

/** Watches which indexer pod is the writer (its /health `role`), and the longest time none was. */
export function writerWatch(pods: () => Pod[]) {
  let running = true;
  let lastWriterAt: number | undefined;
  let longestGapMs = 0;
  const writers = new Set<string>();
  const port = (p: Pod) => p.spec.containers[0]!.ports!.find((x) => x.name === 'http')!.containerPort;
  const done = (async () => {
    while (running) {
      const roles = await Promise.all(
        pods().map(async (p) => {
          try {
            const r = await fetch(`http://${p.ip}:${port(p)}/health`, { signal: AbortSignal.timeout(1_000) });
            return { pod: p.name, role: ((await r.json()) as { role?: string }).role };
          } catch {
            return { pod: p.name, role: undefined };
          }
        }),
      );
      const now = Date.now();
      const writer = roles.find((r) => r.role === 'writer');
      if (writer) {
        writers.add(writer.pod);
        if (lastWriterAt !== undefined) longestGapMs = Math.max(longestGapMs, now - lastWriterAt);
        lastWriterAt = now;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    writers,
    /** The longest time between two polls that each saw a writer (a hand-over, or a 100 ms poll). */
    longestGapMs: () => longestGapMs,
    reset: () => ((longestGapMs = 0), writers.clear()),
    stop: async () => ((running = false), await done),
  };
}

/**
 * The tenant's projection at one moment (a REPEATABLE READ snapshot: its cursor and every table
 * as of the same commit) against the same chain indexed without interruption up to that slot:
 * the blocks the simulated chain (its genesis in the run folder) produced, applied in process.
 */
export async function tablesAgainstUninterrupted(opts: { databaseUrl: string; chainDir: string; programId: string; schema?: string }): Promise<{ slot: number; differing: string[] }> {
  // A projection schema's tables (a re-index's, D-332) are read where the indexer writes them.
  const tenant = createDatabase({ url: opts.schema ? inSchema(opts.databaseUrl, opts.schema) : opts.databaseUrl, poolMax: 1 });
  let slot: number;
  let digests: Awaited<ReturnType<typeof tableDigests>>;
  try {
    const { TransactionMode, isolationLevel } = tenant.pgp.txMode;
    ({ slot, digests } = await tenant.db.tx({ mode: new TransactionMode({ tiLevel: isolationLevel.repeatableRead, readOnly: true }) }, async (t) => {
      const c = await t.one<{ last_processed_slot: string }>('SELECT last_processed_slot FROM indexer_cursor WHERE id = 1');
      return { slot: Number(c.last_processed_slot), digests: await tableDigests(t as unknown as Db) };
    }));
  } finally {
    await tenant.close();
  }
  const genesis = JSON.parse(readFileSync(path.join(opts.chainDir, 'simulation.json'), 'utf8')) as { seed: number; feeds: number; epochSeconds: number; startTime: number };
  const sim = new MarketSimulator({ seed: genesis.seed, programId: opts.programId, feeds: genesis.feeds, epochSeconds: genesis.epochSeconds, startTime: genesis.startTime });
  const txs = [];
  while (sim.slot < slot) txs.push(...sim.nextBlock().transactions.filter((t) => t.meta?.err === null));
  const tdb = await createStandaloneDatabase('tenant_reference');
  const ref = createDatabase({ url: tdb.url, poolMax: 4 });
  try {
    const projector = createProjector({ db: ref.db, pgp: ref.pgp, programId: opts.programId, source: 'test' });
    for (let i = 0; i < txs.length; i += 500) await projector.applyBatch(txs.slice(i, i + 500), { writerEpoch: 0 });
    const expected = await tableDigests(ref.db);
    return { slot, differing: Object.keys(expected).filter((k) => JSON.stringify(expected[k]) !== JSON.stringify(digests[k])) };
  } finally {
    await ref.close();
    await tdb.drop();
  }
}
