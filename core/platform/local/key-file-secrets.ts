import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { AesGcmSecrets, MASTER_KEY_BYTES, parseMasterKey } from "../../store/aes-gcm.ts";

/**
 * Reads the master key from `file` (base64 text, so it can be copied into GATEWAY_MASTER_KEY), creating it
 * with mode 0600 on first use. Creation uses the exclusive flag, so two processes starting together agree.
 */
export function loadOrCreateKeyFile(file: string): Buffer {
  try {
    return parseMasterKey(readFileSync(file, "utf8"));
  } catch (error) {
    if ((error as { code?: unknown }).code !== "ENOENT") throw error;
  }
  mkdirSync(dirname(file), { recursive: true });
  try {
    writeFileSync(file, `${randomBytes(MASTER_KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EEXIST") throw error;
  }
  return parseMasterKey(readFileSync(file, "utf8"));
}

/** Secrets sealed with the key in a local key file. */
export class KeyFileSecrets extends AesGcmSecrets {
  constructor(file: string) {
    super(loadOrCreateKeyFile(file));
  }
}
