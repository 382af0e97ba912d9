/** A value already serialized: spliced into the response as it is (a `getTransaction` body is serialized once). */
export class RawJson {
  constructor(readonly json: string) {}
}

/** A JSON-RPC answer (or a batch of them) as text, splicing in what is already serialized. */
export const serialize = (out: unknown): string => {
  if (Array.isArray(out)) return `[${out.map(serialize).join(',')}]`;
  const r = out as { id?: unknown; result?: unknown };
  if (r && r.result instanceof RawJson) return `{"jsonrpc":"2.0","id":${JSON.stringify(r.id ?? null)},"result":${r.result.json}}`;
  return JSON.stringify(out);
};
