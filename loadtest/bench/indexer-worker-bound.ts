import v8 from 'node:v8';
import type { RawTransaction } from '../../core/events';
import { createPreparer } from '../../indexer/projection/prepare';

/**
 * What moving the indexer's pure-CPU stage (parse and decode, `prepare`) to a worker thread
 * (node:worker_threads) would leave on the main thread, measured on the bench's own batches:
 * a batch crosses threads by structured clone (V8's serializer, which `postMessage` uses, here
 * as `v8.serialize`/`v8.deserialize`, so the figures are a lower bound of a real worker's), the
 * raw transactions on the way in and the prepared batch on the way out. Two ways to feed it:
 * - objects, as every source delivers them today (the RPC source parses its responses): the main
 *   thread still parses the JSON and now also serializes the raw batch and deserializes the result;
 * - the response text, transferred without a copy: the worker parses the JSON too, and the main
 *   thread only deserializes the result (sources would have to hand over text).
 * Each figure is µs per event on one thread, medians of `rounds` passes.
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
  const out = (b: RawTransaction[]) => {
    const p = preparer.prepare(b);
    return { parsed: p.parsed, candidates: p.candidates, events: p.events };
  };
  const parsedRaw = raws();
  const serializedRaw = parsedRaw.map((b) => v8.serialize(b));
  const outs = parsedRaw.map(out);
  const serializedOut = outs.map((o) => v8.serialize(o));
  let sink = 0;
  return {
    jsonParse: time(() => void raws()),
    prepare: time(() => parsedRaw.forEach((b) => (sink += preparer.prepare(b).events.length))),
    serializeRaw: time(() => parsedRaw.forEach((b) => (sink += v8.serialize(b).length))),
    deserializeRaw: time(() => serializedRaw.forEach((b) => (sink += (v8.deserialize(b) as unknown[]).length))),
    serializePrepared: time(() => outs.forEach((o) => (sink += v8.serialize(o).length))),
    deserializePrepared: time(() => serializedOut.forEach((b) => (sink += (v8.deserialize(b) as { events: unknown[] }).events.length))),
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
