import type { JWK } from "jose";

/**
 * The private key set an admin gives for `private_key_jwt` (RFC 7523 client assertions): its public half (what
 * views show, what the IdP registers) and the key that signs assertions (the first key of the set).
 */

const PRIVATE_MEMBERS = new Set(["d", "p", "q", "dp", "dq", "qi", "oth", "k"]);

export interface PrivateJwks {
  keys: Array<Record<string, unknown>>;
}

export function publicJwks(jwks: PrivateJwks): { keys: Array<Record<string, unknown>> } {
  return {
    keys: jwks.keys.map((key) =>
      Object.fromEntries(Object.entries(key).filter(([name]) => !PRIVATE_MEMBERS.has(name))),
    ),
  };
}

/** The signing algorithm of a key: its own `alg`, else the usual one for its type and curve. */
export function algorithmOf(jwk: Record<string, unknown>): string {
  if (typeof jwk.alg === "string") return jwk.alg;
  if (jwk.kty === "RSA") return "RS256";
  if (jwk.kty === "OKP") return "EdDSA";
  return (
    ({ "P-256": "ES256", "P-384": "ES384", "P-521": "ES512" } as Record<string, string>)[String(jwk.crv)] ?? "ES256"
  );
}

/** The first key as openid-client's PrivateKey; throws when it is not a usable private signing key. */
export async function signingKey(jwks: PrivateJwks): Promise<{ key: CryptoKey; kid?: string }> {
  const { importJWK } = await import("jose");
  const jwk = jwks.keys[0]!;
  const key = await importJWK(jwk as JWK, algorithmOf(jwk));
  if (!(key instanceof CryptoKey) || key.type !== "private") throw new Error("not a private key");
  return { key, kid: typeof jwk.kid === "string" ? jwk.kid : undefined };
}
