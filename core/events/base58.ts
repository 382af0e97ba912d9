/**
 * Base58 decoding (the Bitcoin alphabet Solana uses) for long inputs: emit_cpi instruction
 * data is ~300 characters, and decoding it was the largest single cost of parsing in
 * `npm run bench -- indexer` (D-123). @scure/base converts one digit at a time through
 * generic radix arrays (~21 µs for 300 characters here); this reads nine digits at a time
 * into a double (58^9 < 2^53) and folds them into a BigInt, whose multiplication and hex
 * output are native loops (~7 µs). A loop over 24-bit limbs in doubles measured ~13 µs: its
 * carry chain is latency-bound. Same results as @scure/base's `base58` (tested against it),
 * but an invalid character gives undefined instead of throwing.
 */
const ALPHABET = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const DIGIT = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT[ALPHABET.charCodeAt(i)] = i;
/** 58^k for k = 0…9. */
const POW = Array.from({ length: 10 }, (_, k) => 58n ** BigInt(k));

export function decodeBase58(s: string): Uint8Array | undefined {
  const n = s.length;
  let zeros = 0;
  while (zeros < n && s.charCodeAt(zeros) === 49) zeros++; // leading '1's are zero bytes
  let value = 0n;
  for (let i = zeros; i < n; ) {
    const end = Math.min(n, i + 9);
    const k = end - i;
    let chunk = 0;
    for (; i < end; i++) {
      const c = s.charCodeAt(i);
      const d = c < 128 ? DIGIT[c]! : -1;
      if (d < 0) return undefined;
      chunk = chunk * 58 + d;
    }
    value = value * POW[k]! + BigInt(chunk);
  }
  if (value === 0n) return new Uint8Array(zeros);
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const out = new Uint8Array(zeros + hex.length / 2);
  Buffer.from(out.buffer, out.byteOffset + zeros, hex.length / 2).write(hex, 'hex');
  return out;
}
