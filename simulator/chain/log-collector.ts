/**
 * The validator's log collector (anza-xyz/agave `log-collector/src/lib.rs`, D-471): a
 * transaction's log holds at most 10,000 bytes. The message that would reach the limit is
 * replaced, the first time, by `Log truncated`, and is not counted; so a later message short
 * enough to fit is still kept, as Agave keeps it.
 */
export const LOG_MESSAGES_BYTES_LIMIT = 10 * 1000;

export function collectLogs(messages: readonly string[], limit = LOG_MESSAGES_BYTES_LIMIT): string[] {
  const out: string[] = [];
  let written = 0;
  let warned = false;
  for (const m of messages) {
    const next = written + Buffer.byteLength(m);
    if (next >= limit) {
      if (!warned) out.push('Log truncated');
      warned = true;
    } else {
      written = next;
      out.push(m);
    }
  }
  return out;
}
