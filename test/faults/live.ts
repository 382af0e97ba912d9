import type { Db } from '../../core/db';
import type { Json } from '../support/api';
import { waitFor } from '../support/tables';
import { WsClient } from '../support/ws';

/** The simulator's first market ids: marketId = floor(unix time / 60) from its fixed genesis. */
export const FIRST_MARKET = Math.floor(1_767_225_600 / 60);
export const bookChannels = (n: number) => Array.from({ length: n }, (_, i) => `orderbook:${FIRST_MARKET + i}`);

export const updatesOf = (clients: WsClient[], channel: string): Json[] =>
  clients.flatMap((c) => c.received.filter((m) => m.type === 'update' && m.channel === channel));

/**
 * What a D-53 client would lose on `channel`, given the updates it received (on one or more
 * sockets, in order): each gap in `seq` is asked for again with `resumeFrom` on a fresh socket,
 * and what the stream can no longer replay counts as lost; so does a last top of book that is
 * not the committed one.
 */
export async function lostOn(wsUrl: string, db: Db, channel: string, receivedNow: () => Json[]): Promise<number> {
  const id = channel.split(':')[1];
  const row = await db.oneOrNone<{ best_bid: number | null; best_ask: number | null }>('SELECT best_bid, best_ask FROM markets WHERE market_id = $1', [id]);
  const lastOf = () => receivedNow().reduce<Json | undefined>((a, m) => (!a || m.seq >= a.seq ? m : a), undefined);
  let lost = 0;
  // Delivery lags the commit: wait (bounded) for the last committed top of book to arrive.
  const ended = row
    ? await waitFor(`${channel} ends on the committed top of book`, async () => lastOf()?.data.bestBid === row.best_bid && lastOf()?.data.bestAsk === row.best_ask, 15_000).then(
        () => true,
        () => row.best_bid === null && row.best_ask === null && !lastOf(),
      )
    : true;
  if (!ended) lost += 1;
  const received = receivedNow();
  const seqs = [...new Set(received.map((m) => m.seq as number))].sort((a, b) => a - b);
  const check = await WsClient.open(wsUrl);
  try {
    await check.next((m) => m.type === 'connected');
    for (let i = 1; i < seqs.length; i++) {
      const [before, after] = [seqs[i - 1]!, seqs[i]!];
      if (after === before + 1) continue;
      const r = await check.request({ type: 'subscribe', channel, resumeFrom: before });
      if (r.resumed !== true) lost += after - before - 1;
      else {
        const replayed: Json[] = [];
        for (let k = 0; k < (r.replayed as number); k++) replayed.push(await check.next((m) => m.type === 'update' && m.channel === channel));
        lost += Math.max(0, after - before - 1 - replayed.filter((m) => m.seq > before && m.seq < after).length);
      }
      await check.request({ type: 'unsubscribe', channel });
    }
  } finally {
    check.ws.terminate();
  }
  return lost;
}
