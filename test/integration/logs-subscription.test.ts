import WebSocket from 'ws';
import { subscribeProgramLogs } from '../../indexer/sources/logs-subscription';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { MarketSimulator } from '../../simulator/simulation';
import { testCommon } from '../support/common';
import { PROGRAM_ID } from '../support/indexer';
import { waitFor } from '../support/tables';

jest.setTimeout(60_000);

// logsSubscribe against a provider that closes idle sockets, refuses a subscription or goes
// silent (D-475): the indexer's subscription pings, checks the subscribe call's answer, and
// replaces a socket from which nothing comes.
describe('logsSubscribe kept alive and checked', () => {
  let chain: SimulatorRpcServer;
  let wsUrl: string;
  const states: boolean[] = [];
  const notified: string[] = [];
  let sub: { close(): void } | undefined;
  const lines: string[] = [];
  const common = testCommon({}, { logTo: (line) => lines.push(line) });

  beforeEach(async () => {
    chain = createSimulatorRpcServer({ simulator: new MarketSimulator({ seed: 475, programId: PROGRAM_ID }), limits: { idleCloseMs: 400 } });
    ({ wsUrl } = await chain.listen());
    states.length = 0;
    notified.length = 0;
    lines.length = 0;
  });
  afterEach(async () => {
    sub?.close();
    await chain.close();
  });

  const subscribe = () =>
    (sub = subscribeProgramLogs({
      wsUrl, programId: PROGRAM_ID, logger: common.logger, pingIntervalMs: 100, silentAfterMs: 500, subscribeTimeoutMs: 1_000,
      onNotification: (signature) => notified.push(signature),
      onStateChange: (up) => states.push(up),
    }));

  it('closes a socket that sends nothing, as a provider does; a pinging subscription stays open', async () => {
    const idle = new WebSocket(wsUrl);
    const code = await new Promise<number>((resolve) => idle.on('close', (c) => resolve(c)));
    expect(code).toBe(1000);
    subscribe();
    await waitFor('subscribed', async () => states.includes(true));
    // Five idle periods without a notification: still the first socket.
    await new Promise((r) => setTimeout(r, 2_000));
    expect(states).toEqual([true]);
    expect(chain.pubsub.idleCloses()).toBe(1);
    chain.advance(5);
    await waitFor('a notification', async () => notified.length > 0);
  });

  it('takes a refused subscribe call for a failure: logged, asked again, connected only once subscribed', async () => {
    chain.pubsub.refuseSubscriptions(2);
    subscribe();
    await waitFor('subscribed', async () => chain.subscriberCount() === 1, 20_000);
    await waitFor('reported', async () => states.includes(true));
    expect(states).toEqual([true]);
    expect(lines.filter((l) => l.includes('the subscribe call was refused'))).toHaveLength(2);
    expect(lines.some((l) => l.includes('subscription limit reached'))).toBe(true);
    chain.advance(5);
    await waitFor('a notification', async () => notified.length > 0);
  });

  it('replaces a socket that went silent (no pong, no message) and subscribes again', async () => {
    subscribe();
    await waitFor('subscribed', async () => states.includes(true));
    chain.pubsub.silence();
    await waitFor('the silent socket given up and a new one subscribed', async () => states.join() === 'true,false,true', 20_000);
    expect(lines.some((l) => l.includes('nothing heard for'))).toBe(true);
    chain.advance(5);
    await waitFor('a notification on the new socket', async () => notified.length > 0);
  });
});
