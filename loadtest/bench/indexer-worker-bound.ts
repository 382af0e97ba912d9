import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import type { RawTransaction } from '../../core/events';
import { createPreparer } from '../../indexer/projection/prepare';

/**
 * What moving the indexer's pure-CPU stage (parse and decode, `prepare`) to a worker thread
 * (node:worker_threads) would leave on each thread, measured on the bench's own batches: a batch
 * crosses threads by structured clone, the raw transactions on the way in and the prepared batch
 * on the way out. Measured through a MessageChannel in this thread: `postMessage` serializes on
 * the sender's thread and `receiveMessageOnPort` deserializes on the receiver's, as between a
 * worker and the main thread (`v8.serialize` and `v8.deserialize` cost 2–3 times as much). Two
 * ways to feed the worker:
 * - objects, as every source delivers them today (the RPC source parses its responses): the main
 *   thread still parses the JSON and now also sends the raw batch and receives the result;
 * - the response text, transferred without a copy: the worker parses the JSON too, and the main
 *   thread only receives the result (sources would have to hand over text).
 * Each figure is µs per event on one thread, the median of `rounds` passes.
 */
export function measureWorkerSplit(batches: Buffer[], programId: string, rounds = 3) {
  const preparer = createPreparer(programId);
  const sample = batches.slice(0, 20);
  const raws = () => sample.map((b) => JSON.parse(b.toString()) as RawTransaction[]);
  const events = raws().reduce((n, b) => n + preparer.prepare(b).events.length, 0);
  const time = (f: () => void) => {
    const runs: number[] = [];
    for (let r = 0; r < rounds; r++) {
      const t = performance.now();
      f();
      runs.push(((performance.now() - t) * 1000) / events);
    }
    return runs.sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
  };
  const parsedRaw = raws();
  const outs = parsedRaw.map((b) => {
    const p = preparer.prepare(b);
    return { parsed: p.parsed, candidates: p.candidates, events: p.events };
  });
  const { port1, port2 } = new MessageChannel();
  // Sending and receiving timed apart: each is one thread's share.
  const crossing = (xs: readonly unknown[]) => {
    const send: number[] = [];
    const receive: number[] = [];
    for (let r = 0; r < rounds; r++) {
      let t = performance.now();
      for (const x of xs) port1.postMessage(x);
      send.push(((performance.now() - t) * 1000) / events);
      t = performance.now();
      for (let i = 0; i < xs.length; i++) receiveMessageOnPort(port2);
      receive.push(((performance.now() - t) * 1000) / events);
    }
    const median = (a: number[]) => a.sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
    return { send: median(send), receive: median(receive) };
  };
  let sink = 0;
  const jsonParse = time(() => void raws());
  const prepare = time(() => parsedRaw.forEach((b) => (sink += preparer.prepare(b).events.length)));
  const raw = crossing(parsedRaw);
  const prepared = crossing(outs);
  port1.close();
  return {
    jsonParse,
    prepare,
    serializeRaw: raw.send,
    deserializeRaw: raw.receive,
    serializePrepared: prepared.send,
    deserializePrepared: prepared.receive,
    sink,
  };
}

/**
 * The share of its CPU-bound limit a pipeline of single-threaded stages can reach on `cores`:
 * the limit is cores / (sum of their µs per event), the pipeline's rate 1 / (the slowest stage).
 */
export const stageBound = (stages: number[], cores: number) => {
  const sum = stages.reduce((a, b) => a + b, 0);
  const limit = (cores * 1e6) / sum;
  return { limit, ratio: Math.min(1, sum / (cores * Math.max(...stages))) };
};
