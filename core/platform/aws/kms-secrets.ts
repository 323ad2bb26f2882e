import { DecryptCommand, EncryptCommand, type KMSClient } from "@aws-sdk/client-kms";
import type { Secrets } from "../../store/ports.ts";
import { aws } from "./errors.ts";

/** The master key for AES-GCM secrets on AWS: 32 bytes of base64 in GATEWAY_MASTER_KEY (an SST secret). */
const VERSION = "kms1";
/** Bound into every ciphertext: KMS refuses to decrypt one made for another purpose. */
const ENCRYPTION_CONTEXT = { purpose: "gateway-secret" };

/**
 * Secrets sealed by KMS itself (no key material in the function). Values are small provider credentials,
 * well under KMS's 4 KB limit, so no envelope is needed. Format: `kms1:<ciphertext blob b64>`.
 */
export class KmsSecrets implements Secrets {
  readonly #client: Pick<KMSClient, "send">;
  readonly #keyId: string;

  constructor(client: Pick<KMSClient, "send">, keyId: string) {
    this.#client = client;
    this.#keyId = keyId;
  }

  async encrypt(plaintext: string): Promise<string> {
    const out = await aws("secrets.encrypt", () =>
      this.#client.send(
        new EncryptCommand({
          KeyId: this.#keyId,
          Plaintext: Buffer.from(plaintext, "utf8"),
          EncryptionContext: ENCRYPTION_CONTEXT,
        }),
      ),
    );
    return `${VERSION}:${Buffer.from(out.CiphertextBlob!).toString("base64")}`;
  }

  async decrypt(ciphertext: string): Promise<string> {
    const [version, blob, ...rest] = ciphertext.split(":");
    if (version !== VERSION || !blob || rest.length > 0) throw new Error("not a KMS secret");
    const out = await aws("secrets.decrypt", () =>
      this.#client.send(
        new DecryptCommand({
          // Naming the key makes KMS refuse a ciphertext made under any other key.
          KeyId: this.#keyId,
          CiphertextBlob: Buffer.from(blob, "base64"),
          EncryptionContext: ENCRYPTION_CONTEXT,
        }),
      ),
    );
    return Buffer.from(out.Plaintext!).toString("utf8");
  }
}
