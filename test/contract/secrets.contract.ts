import { describe, expect, it } from "vitest";
import type { Secrets } from "../../core/store/ports.ts";

/** Each call returns Secrets under a new, different key. */
export function secretsContract(secretsWithNewKey: () => Secrets) {
  describe("Secrets", () => {
    it("round-trips values, with a fresh ciphertext each time", async () => {
      const secrets = secretsWithNewKey();
      for (const value of ["sk-test-123", "", "ünïcødé 🔑", "x".repeat(4000)]) {
        const sealed = await secrets.encrypt(value);
        expect(sealed).not.toContain(value || "\0");
        expect(await secrets.decrypt(sealed)).toBe(value);
      }
      expect(await secrets.encrypt("same")).not.toBe(await secrets.encrypt("same"));
    });

    it("detects tampering and malformed input", async () => {
      const secrets = secretsWithNewKey();
      const sealed = await secrets.encrypt("provider-key");
      const parts = sealed.split(":");
      const body = Buffer.from(parts.at(-1)!, "base64");
      body[0] ^= 1;
      const tampered = [...parts.slice(0, -1), body.toString("base64")].join(":");
      await expect(secrets.decrypt(tampered)).rejects.toThrow();
      await expect(secrets.decrypt("garbage")).rejects.toThrow();
      await expect(secrets.decrypt(`${sealed}:extra`)).rejects.toThrow();
    });

    it("refuses ciphertexts made with another key", async () => {
      const sealed = await secretsWithNewKey().encrypt("provider-key");
      await expect(secretsWithNewKey().decrypt(sealed)).rejects.toThrow();
    });
  });
}
