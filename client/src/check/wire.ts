import { encodeBase58 } from '../base58';

/**
 * A wire transaction's message read directly (D-532), legacy or v0, as the chain reads it:
 * signature slots, header, static keys, blockhash, instructions. No Solana library, so the
 * browser build carries none; lookup tables are refused (the API's builders never use them, and
 * the accounts they name could not be checked without the chain).
 */
export interface WireInstruction {
  programId: string;
  accounts: string[];
  data: Uint8Array;
}
export interface WireMessage {
  signers: string[];
  staticAccounts: string[];
  writable: Set<string>;
  instructions: WireInstruction[];
}

export class WireFormatError extends Error {
  override name = 'WireFormatError';
}

export const fromBase64 = (s: string): Uint8Array => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));

/** A cursor over the bytes that names what ran out. */
function reader(bytes: Uint8Array) {
  let at = 0;
  const need = (n: number, what: string) => {
    if (at + n > bytes.length) throw new WireFormatError(`undecodable transaction: it ends inside ${what}`);
  };
  return {
    get at() {
      return at;
    },
    u8(what: string): number {
      need(1, what);
      return bytes[at++]!;
    },
    /** Solana's compact-u16 (shortvec). */
    shortvec(what: string): number {
      let value = 0;
      for (let i = 0; i < 3; i++) {
        const b = this.u8(what);
        value |= (b & 0x7f) << (7 * i);
        if (!(b & 0x80)) return value;
      }
      throw new WireFormatError(`undecodable transaction: malformed length of ${what}`);
    },
    take(n: number, what: string): Uint8Array {
      need(n, what);
      const out = bytes.subarray(at, at + n);
      at += n;
      return out;
    },
    done: () => at === bytes.length,
  };
}

/** The message of a base64 wire transaction, its accounts in base58. */
export function decodeWireMessage(base64: string): WireMessage {
  let bytes: Uint8Array;
  try {
    bytes = fromBase64(base64);
  } catch {
    throw new WireFormatError('undecodable transaction: not base64');
  }
  const r = reader(bytes);
  const slots = r.shortvec('the signature count');
  r.take(64 * slots, 'the signatures');
  let first = r.u8('the message header');
  const versioned = (first & 0x80) !== 0;
  if (versioned) {
    if ((first & 0x7f) !== 0) throw new WireFormatError(`undecodable transaction: message version ${first & 0x7f} is not 0`);
    first = r.u8('the message header');
  }
  const [required, readonlySigned, readonlyUnsigned] = [first, r.u8('the message header'), r.u8('the message header')];
  if (required !== slots) throw new WireFormatError(`undecodable transaction: ${slots} signature slots for ${required} signers`);
  const n = r.shortvec('the account count');
  const keys = Array.from({ length: n }, () => encodeBase58(r.take(32, 'the account keys')));
  r.take(32, 'the blockhash');
  const writable = new Set(keys.filter((_, i) => (i < required ? i < required - readonlySigned : i < n - readonlyUnsigned)));
  const key = (i: number) => {
    const k = keys[i];
    if (k === undefined) throw new WireFormatError('undecodable transaction: an instruction names an account index out of range');
    return k;
  };
  const instructions = Array.from({ length: r.shortvec('the instruction count') }, () => {
    const programId = key(r.u8('an instruction'));
    const accounts = Array.from({ length: r.shortvec('an instruction') }, () => key(r.u8('an instruction')));
    return { programId, accounts, data: Uint8Array.from(r.take(r.shortvec('an instruction'), "an instruction's data")) };
  });
  if (versioned && r.shortvec('the lookup tables') > 0) throw new WireFormatError('address lookup tables are not supported');
  if (!r.done()) throw new WireFormatError('undecodable transaction: bytes after the message');
  return { signers: keys.slice(0, required), staticAccounts: keys, writable, instructions };
}
