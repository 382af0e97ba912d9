import { MarketSimulator } from '../../simulator/simulation';
import { createSimulatorRpcServer, type SimulatorRpcServer } from '../../simulator/rpc-server';
import { PROGRAM_ID } from '../support/indexer';

/** The simulated chain's RPC as a provider's pool of nodes that lag, answering as Agave does (D-460). */
describe('the simulated RPC pool (D-460)', () => {
  const sim = new MarketSimulator({ seed: 460, programId: PROGRAM_ID });
  let chain: SimulatorRpcServer;
  let url: string;
  let id = 0;
  const post = async (method: string, params: unknown[]) => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }) });
    return (await res.json()) as { result?: unknown; error?: { code: number; message: string; data?: unknown } };
  };
  type Sig = { signature: string; slot: number };
  const list = async (cfg: Record<string, unknown>) => (await post('getSignaturesForAddress', [PROGRAM_ID, { commitment: 'confirmed', ...cfg }])).result as Sig[];

  beforeAll(async () => {
    // Node 0 up to date, node 1 twenty slots behind: requests alternate between them.
    chain = createSimulatorRpcServer({ simulator: sim, pool: { lags: [0, 20] } });
    url = (await chain.listen()).url;
    chain.advance(120);
  });
  afterAll(() => chain.close());

  it('spreads each method\'s requests round-robin, each node answering getSlot from its own confirmed slot', async () => {
    const slots = [];
    for (let i = 0; i < 4; i++) slots.push((await post('getSlot', [{ commitment: 'confirmed' }])).result);
    expect(slots).toEqual([sim.slot, sim.slot - 20, sim.slot, sim.slot - 20]);
    expect(chain.pool.served()).toEqual([2, 2]);
  });

  it('refuses a minContextSlot the node has not reached with -32016 and its slot', async () => {
    const answers = [await post('getSlot', [{ minContextSlot: sim.slot }]), await post('getSlot', [{ minContextSlot: sim.slot }])];
    expect(answers[0]).toMatchObject({ result: sim.slot });
    expect(answers[1]).toMatchObject({ error: { code: -32016, message: 'Minimum context slot has not been reached', data: { contextSlot: sim.slot - 20 } } });
    expect((await list({ minContextSlot: sim.slot })).length).toBeGreaterThan(0);
    expect(await post('getSignaturesForAddress', [PROGRAM_ID, { minContextSlot: sim.slot }])).toMatchObject({ error: { code: -32016 } });
  });

  it('lists from its own view: a before it lacks lists nothing, an until it lacks is ignored', async () => {
    const fresh = await list({ limit: 1000 }); // node 0
    const lagging = await list({ limit: 1000 }); // node 1
    const newest = fresh[0]!;
    expect(newest.slot).toBeGreaterThan(sim.slot - 20);
    expect(lagging[0]!.slot).toBeLessThanOrEqual(sim.slot - 20);
    expect(fresh.slice(fresh.length - lagging.length).map((s) => s.signature)).toEqual(lagging.map((s) => s.signature));
    // `before` the newest signature: node 0 lists what is below it, node 1 nothing.
    expect((await list({ before: newest.signature })).length).toBe(fresh.length - 1);
    expect(await list({ before: newest.signature })).toEqual([]);
    // `until` the newest signature: node 0 lists nothing newer, node 1 ignores it and lists all it has.
    expect(await list({ until: newest.signature })).toEqual([]);
    expect((await list({ until: newest.signature })).length).toBe(lagging.length);
  });

  it('has no body for a transaction in a slot the node has not confirmed, and refuses processed', async () => {
    const newest = (await list({ limit: 1 }))[0]!;
    const cfg = { encoding: 'json', maxSupportedTransactionVersion: 0, commitment: 'confirmed' };
    const bodies = [await post('getTransaction', [newest.signature, cfg]), await post('getTransaction', [newest.signature, cfg])];
    expect(bodies[0]!.result).toMatchObject({ slot: newest.slot });
    expect(bodies[1]).toEqual(expect.objectContaining({ result: null }));
    const processed = await post('getTransaction', [newest.signature, { ...cfg, commitment: 'processed' }]);
    expect(processed.error).toEqual({ code: -32602, message: 'Method does not support commitment below `confirmed`' });
    expect((await post('getSignaturesForAddress', [PROGRAM_ID, { commitment: 'processed' }])).error).toMatchObject({ code: -32602 });
  });

  it('answers getSignatureStatuses from the node\'s view, the blockstore with searchTransactionHistory', async () => {
    chain.pool.configure({ lags: [0] });
    const all = await list({ limit: 1000 });
    const oldest = all[all.length - 1]!;
    const res = (await post('getSignatureStatuses', [[oldest.signature, 'unknown'], { searchTransactionHistory: true }])).result as { value: unknown[] };
    expect(res.value).toEqual([expect.objectContaining({ slot: oldest.slot, confirmationStatus: 'confirmed' }), null]);
    // Beyond the status cache's recent slots without searchTransactionHistory.
    chain.advance(160);
    expect(((await post('getSignatureStatuses', [[oldest.signature]])).result as { value: unknown[] }).value).toEqual([null]);
    chain.pool.configure({ lags: [0, 20] });
  });
});
