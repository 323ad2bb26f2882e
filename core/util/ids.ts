import { hash, randomBytes } from "node:crypto";

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += CROCKFORD[(buffer << (5 - bits)) & 31];
  return out;
}

/** Random bytes drawn from a pooled buffer: one system call per 4 KiB instead of one per id. */
const POOL_SIZE = 4096;
let pool = Buffer.alloc(0);
let poolOffset = POOL_SIZE;

export function pooledRandomBytes(length: number): Uint8Array {
  if (poolOffset + length > pool.length) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  const slice = pool.subarray(poolOffset, poolOffset + length);
  poolOffset += length;
  return slice;
}

/**
 * A prefixed id that sorts by creation time: `<prefix>_<10 chars of ms timestamp><16 random chars>`.
 * 80 random bits make ids unguessable enough for resource ids (not for secrets: see newSecret).
 */
export function newId(prefix: string, now = Date.now()): string {
  let time = "";
  let remaining = now;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[remaining % 32] + time;
    remaining = Math.floor(remaining / 32);
  }
  return `${prefix}_${time}${base32(pooledRandomBytes(10))}`;
}

/** A high-entropy secret (256 bits) with a recognisable prefix, e.g. API keys. */
export function newSecret(prefix: string): string {
  return `${prefix}-${randomBytes(32).toString("base64url")}`;
}

// One-shot hash: no Hash object per call (runs on every authenticated request).
export const sha256Hex = (value: string) => hash("sha256", value, "hex");
