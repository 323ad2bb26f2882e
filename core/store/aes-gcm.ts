import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import type { Secrets } from "./ports.ts";

/**
 * AES-256-GCM with a 32-byte master key, shared by the key-file (local) and master-key (AWS) adapters so a
 * ciphertext made on one platform decrypts on the other with the same key.
 * Format: `v1:<iv b64>:<tag b64>:<ciphertext b64>`; the version leaves room for rotating the scheme later.
 */
const VERSION = "v1";
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const MASTER_KEY_BYTES = 32;

export class SecretDecryptionError extends Error {
  constructor(message = "secret cannot be decrypted: tampered with, malformed or made with another key") {
    super(message);
    this.name = "SecretDecryptionError";
  }
}

export class AesGcmSecrets implements Secrets {
  readonly #key: Buffer;

  constructor(masterKey: Uint8Array) {
    if (masterKey.byteLength !== MASTER_KEY_BYTES) {
      throw new RangeError(`master key must be ${MASTER_KEY_BYTES} bytes, got ${masterKey.byteLength}`);
    }
    this.#key = Buffer.from(masterKey);
  }

  async encrypt(plaintext: string): Promise<string> {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.#key, iv, { authTagLength: TAG_BYTES });
    // The version is authenticated too, so a ciphertext cannot be replayed under another format.
    cipher.setAAD(Buffer.from(VERSION));
    const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [VERSION, iv.toString("base64"), cipher.getAuthTag().toString("base64"), ciphertext.toString("base64")].join(
      ":",
    );
  }

  async decrypt(ciphertext: string): Promise<string> {
    const [version, iv, tag, body, ...rest] = ciphertext.split(":");
    if (version !== VERSION || body === undefined || rest.length > 0) throw new SecretDecryptionError();
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.#key, Buffer.from(iv, "base64"), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(VERSION));
      decipher.setAuthTag(Buffer.from(tag, "base64"));
      return Buffer.concat([decipher.update(Buffer.from(body, "base64")), decipher.final()]).toString("utf8");
    } catch {
      throw new SecretDecryptionError();
    }
  }
}

/** Parses a base64 master key (e.g. GATEWAY_MASTER_KEY) and checks its length. */
export function parseMasterKey(base64: string): Buffer {
  const key = Buffer.from(base64.trim(), "base64");
  if (key.byteLength !== MASTER_KEY_BYTES) {
    throw new RangeError(`master key must be ${MASTER_KEY_BYTES} bytes of base64, got ${key.byteLength} bytes`);
  }
  return key;
}
