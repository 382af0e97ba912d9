import { decodeBase58 } from './base58';
import { decodeEvent, EVENT_IX_TAG, EventDecodeError } from './codec';
import type { RawInstruction, RawTransaction } from './transaction';
import type { ProgramEvent } from './types';

export interface ParsedEvent {
  /** Position among this transaction's event payloads, in execution order: the key with the signature. */
  index: number;
  via: 'log' | 'cpi';
  bytes: Uint8Array;
  event: ProgramEvent;
}

export interface InvalidEvent {
  index: number;
  via: 'log' | 'cpi';
  bytes: Uint8Array;
  reason: 'unknown_discriminator' | 'undecodable';
  detail: string;
}

export interface ParsedTransaction {
  signature: string;
  slot: number;
  blockTime: number | null;
  /** Failed transactions changed nothing on chain; their logs are ignored. */
  failed: boolean;
  /**
   * The validator cut the log (`Log truncated`): events emitted through `Program data:`
   * after the cut are lost, though emit_cpi events are still read from inner instructions.
   */
  truncated: boolean;
  events: ParsedEvent[];
  invalid: InvalidEvent[];
}

export class TransactionShapeError extends Error {
  override name = 'TransactionShapeError';
}

const INVOKE = /^Program ([1-9A-HJ-NP-Za-km-z]{32,44}) invoke \[(\d+)\]$/;
const RESULT = /^Program ([1-9A-HJ-NP-Za-km-z]{32,44}) (success|failed)/;
const DATA = 'Program data: ';
const TRUNCATED = 'Log truncated';

function accountKeysOf(tx: RawTransaction): string[] {
  const keys = tx.transaction.message.accountKeys.map((k) => (typeof k === 'string' ? k : k.pubkey));
  const loaded = tx.meta?.loadedAddresses;
  // v0 transactions: static keys, then writable, then readonly lookup-table addresses.
  return loaded ? [...keys, ...loaded.writable, ...loaded.readonly] : keys;
}

function programOf(ix: RawInstruction, keys: string[]): string | undefined {
  if (ix.programId) return ix.programId;
  return ix.programIdIndex === undefined ? undefined : keys[ix.programIdIndex];
}

/** Bytes of an emit_cpi self-invocation's event (after the tag), or undefined if it is none. */
function cpiEventBytes(ix: RawInstruction, keys: string[], programId: string): Uint8Array | undefined {
  if (programOf(ix, keys) !== programId || !ix.data) return undefined;
  const data = decodeBase58(ix.data);
  if (!data || data.length < 8 || !EVENT_IX_TAG.every((b, i) => data[i] === b)) return undefined;
  return data.subarray(8);
}

/**
 * Node's base64 decoder also takes the URL-safe `-` and `_`, skips other characters outside
 * the alphabet and stops at padding, so a payload without `-` or `_` is strict base64 exactly
 * when it decodes to the length its characters promise: a length comparison instead of a
 * regular expression over every payload.
 */
export function decodeBase64Strict(s: string): Uint8Array | undefined {
  if (s.length % 4 !== 0 || s.includes('-') || s.includes('_')) return undefined;
  const pad = s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0;
  const bytes = Buffer.from(s, 'base64');
  return bytes.length === (s.length / 4) * 3 - pad ? bytes : undefined;
}

/**
 * Extracts our program's events from one transaction, in execution order:
 * - `Program data: <base64>` lines while our program is on top of the invoke stack (a CPI
 *   into another program that logs data does not count, nor does another program's data);
 * - emit_cpi events: inner instructions to our program whose data starts with Anchor's
 *   event tag. Each `invoke [1]` line is matched to the next message instruction of its
 *   program (precompiles log none), each `invoke [n>1]` line to the next inner instruction
 *   of that top-level instruction, which places CPI events between log events exactly.
 * Undecodable payloads keep their index and are returned in `invalid` for dead-lettering.
 */
export function parseTransaction(tx: RawTransaction, programId: string): ParsedTransaction {
  const signature = tx.transaction?.signatures?.[0];
  if (typeof signature !== 'string') throw new TransactionShapeError('transaction has no signature');
  if (!Number.isSafeInteger(tx.slot) || tx.slot < 0) throw new TransactionShapeError('transaction has no valid slot');
  const result: ParsedTransaction = {
    signature,
    slot: tx.slot,
    blockTime: typeof tx.blockTime === 'number' ? tx.blockTime : null,
    failed: tx.meta === null || (tx.meta.err !== null && tx.meta.err !== undefined),
    truncated: false,
    events: [],
    invalid: [],
  };
  if (result.failed || !tx.meta) return result;

  const keys = accountKeysOf(tx);
  const inner = new Map<number, RawInstruction[]>();
  for (const group of tx.meta.innerInstructions ?? []) inner.set(group.index, group.instructions);

  // A top-level `invoke [1]` line belongs to the next instruction of the message that calls
  // that program: a precompile is verified without an invoke line (Agave's message processor),
  // so counting the lines would shift every later position (D-470).
  const topPrograms = tx.transaction.message.instructions.map((ix) => programOf(ix, keys));
  const nextTopLevel = (program: string, after: number): number => {
    for (let i = after + 1; i < topPrograms.length; i++) if (topPrograms[i] === program) return i;
    return after + 1;
  };

  let index = 0;
  const push = (bytes: Uint8Array | undefined, via: 'log' | 'cpi', malformed?: string) => {
    const i = index++;
    if (!bytes) {
      result.invalid.push({ index: i, via, bytes: new Uint8Array(), reason: 'undecodable', detail: malformed ?? 'malformed payload' });
      return;
    }
    try {
      result.events.push({ index: i, via, bytes, event: decodeEvent(bytes) });
    } catch (err) {
      const reason = err instanceof EventDecodeError ? err.reason : 'undecodable';
      result.invalid.push({ index: i, via, bytes, reason, detail: err instanceof Error ? err.message : String(err) });
    }
  };

  // Inner instructions already read, as group * 65536 + position.
  const seenInner = new Set<number>();
  const logs = tx.meta.logMessages ?? null;
  if (logs) {
    const stack: string[] = [];
    let top = -1;
    let innerCursor = 0;
    for (const line of logs) {
      if (line === TRUNCATED) {
        result.truncated = true;
        break;
      }
      // Cheap suffix tests first: most lines are neither an invoke nor a result.
      const invoke = line.endsWith(']') ? INVOKE.exec(line) : null;
      if (invoke) {
        const program = invoke[1] as string;
        if (invoke[2] === '1') {
          top = nextTopLevel(program, top);
          innerCursor = 0;
        } else {
          const pos = innerCursor++;
          const ix = inner.get(top)?.[pos];
          if (ix) {
            seenInner.add(top * 65536 + pos);
            const bytes = cpiEventBytes(ix, keys, programId);
            if (bytes) push(bytes, 'cpi');
          }
        }
        stack.push(program);
        continue;
      }
      if ((line.endsWith('success') || line.includes(' failed')) && RESULT.test(line)) {
        stack.pop();
        continue;
      }
      if (line.startsWith(DATA) && stack[stack.length - 1] === programId) {
        const payload = line.slice(DATA.length);
        // Anchor emits one base64 field per event; several fields are not an event of ours.
        push(payload.includes(' ') ? undefined : decodeBase64Strict(payload), 'log', 'Program data line is not one base64 field');
      }
    }
  }

  // Without logs (or past a truncation) inner instructions are still complete: read the
  // emit_cpi events the walk did not reach, in order.
  if (!logs || result.truncated) {
    const groups = [...inner.keys()].sort((a, b) => a - b);
    for (const g of groups) {
      (inner.get(g) ?? []).forEach((ix, pos) => {
        if (seenInner.has(g * 65536 + pos)) return;
        const bytes = cpiEventBytes(ix, keys, programId);
        if (bytes) push(bytes, 'cpi');
      });
    }
  }
  return result;
}
