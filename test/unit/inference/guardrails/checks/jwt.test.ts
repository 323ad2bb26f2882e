import { exportJWK, generateKeyPair, type JWK, SignJWT } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { checkInput, fakeEnvironment, jsonByUrl } from "./input.ts";
import { problemOf, runCheck } from "./run-check.ts";

const ISSUER = "https://auth.example.com/";
let uriCount = 0;
// Each test its own JWKS URL: the check caches key sets per URL.
const jwksUri = () => `https://auth.example.com/.well-known/jwks-${++uriCount}.json`;

let signing: CryptoKey;
let publicJwk: JWK;
let otherSigning: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair("ES256");
  signing = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "key-1", alg: "ES256", use: "sig" };
  otherSigning = (await generateKeyPair("ES256")).privateKey;
});

function token(
  options: { key?: CryptoKey; kid?: string; expiresIn?: string | number; issuedAt?: number; claims?: object } = {},
) {
  const jwt = new SignJWT({ email: "ada@example.com", ...options.claims })
    .setProtectedHeader({ alg: "ES256", kid: options.kid ?? "key-1" })
    .setIssuer(ISSUER)
    .setSubject("user_4821")
    .setAudience("gateway")
    .setIssuedAt(options.issuedAt)
    .setExpirationTime(options.expiresIn ?? "10m");
  return jwt.sign(options.key ?? signing);
}

function request(uri: string, authorization: string | undefined, keys: JWK[] = [publicJwk]) {
  const env = fakeEnvironment({ getJson: jsonByUrl({ [uri]: { keys } }) });
  const headers: Record<string, string> = authorization ? { authorization } : {};
  return { env, input: checkInput({ text: "What is our refund policy?", headers, env }) };
}

describe("default.jwt", () => {
  it("passes a valid bearer token, fetching the key set once through the environment", async () => {
    const uri = jwksUri();
    const jwt = await token();
    const { env, input } = request(uri, `Bearer ${jwt}`);
    const result = await runCheck("default.jwt", { jwksUri: uri, issuer: ISSUER, audience: "gateway" }, input);
    expect(result.verdict).toBe(true);
    expect(result.data).toMatchObject({ alg: "ES256", kid: "key-1", issuer: ISSUER, subject: "user_4821" });
    expect(JSON.stringify(result)).not.toContain(jwt);
    await runCheck("default.jwt", { jwksUri: uri }, input);
    expect(env.calls).toEqual([{ method: "getJson", target: uri }]); // the second run used the cached set
  });

  it("reads the token from another header when told", async () => {
    const uri = jwksUri();
    const env = fakeEnvironment({ getJson: jsonByUrl({ [uri]: { keys: [publicJwk] } }) });
    const input = checkInput({ text: "hi", headers: { "x-user-token": await token() }, env });
    expect((await runCheck("default.jwt", { jwksUri: uri, headerKey: "X-User-Token" }, input)).verdict).toBe(true);
  });

  it("fails a missing token, an expired one, a bad signature and a garbled one, saying which", async () => {
    const uri = jwksUri();
    const missing = await runCheck("default.jwt", { jwksUri: uri }, request(uri, undefined).input);
    expect(missing).toEqual({
      verdict: false,
      explanation: "The request has no Authorization header.",
      data: { reason: "missing" },
    });

    const expired = await token({
      issuedAt: Math.floor(Date.now() / 1000) - 7200,
      expiresIn: Math.floor(Date.now() / 1000) - 3600,
    });
    const expiredResult = await runCheck("default.jwt", { jwksUri: uri }, request(uri, `Bearer ${expired}`).input);
    expect(expiredResult).toMatchObject({
      verdict: false,
      explanation: "The JWT has expired.",
      data: { reason: "expired" },
    });

    const forged = await token({ key: otherSigning });
    const forgedResult = await runCheck("default.jwt", { jwksUri: uri }, request(uri, `Bearer ${forged}`).input);
    expect(forgedResult).toMatchObject({ verdict: false, data: { reason: "signature" } });
    expect(JSON.stringify(forgedResult)).not.toContain(forged);

    const garbled = await runCheck("default.jwt", { jwksUri: uri }, request(uri, "Bearer not-a-jwt").input);
    expect(garbled).toMatchObject({ verdict: false, explanation: "The token is not a valid signed JWT." });
  });

  it("checks issuer, audience and the token's age", async () => {
    const uri = jwksUri();
    const jwt = await token();
    const wrongAudience = await runCheck(
      "default.jwt",
      { jwksUri: uri, audience: "billing" },
      request(uri, `Bearer ${jwt}`).input,
    );
    expect(wrongAudience).toMatchObject({ verdict: false, data: { reason: "claim", claim: "aud" } });
    const now = Math.floor(Date.now() / 1000);
    const old = await token({ issuedAt: now - 3 * 3600, expiresIn: now + 3600 }); // unexpired, issued 3 hours ago
    const tooOld = await runCheck(
      "default.jwt",
      { jwksUri: uri, maxTokenAge: "2h" },
      request(uri, `Bearer ${old}`).input,
    );
    expect(tooOld).toEqual({
      verdict: false,
      explanation: "The JWT was issued longer ago than maxTokenAge allows.",
      data: { reason: "too_old" },
    });
  });

  it("refetches the key set for a key it does not know (a rotation), at most once", async () => {
    const uri = jwksUri();
    const rotated = await generateKeyPair("ES256");
    const rotatedJwk = { ...(await exportJWK(rotated.publicKey)), kid: "key-2", alg: "ES256" };
    let served: JWK[] = [publicJwk];
    const env = fakeEnvironment({ getJson: () => ({ status: 200, json: { keys: served } }) });
    const input = (jwt: string) => checkInput({ text: "hi", headers: { authorization: `Bearer ${jwt}` }, env });
    expect((await runCheck("default.jwt", { jwksUri: uri }, input(await token()))).verdict).toBe(true);
    served = [publicJwk, rotatedJwk];
    // Fetched moments ago: no refetch yet, so the new key is unknown.
    const unknown = await runCheck(
      "default.jwt",
      { jwksUri: uri },
      input(await token({ key: rotated.privateKey, kid: "key-2" })),
    );
    expect(unknown).toMatchObject({ verdict: false, data: { reason: "no_key" } });
    expect(env.calls).toHaveLength(1);
    // With the key set kept 0 seconds, every run fetches it, and the new key verifies.
    expect(
      (
        await runCheck(
          "default.jwt",
          { jwksUri: uri, cacheMaxAge: 0 },
          input(await token({ key: rotated.privateKey, kid: "key-2" })),
        )
      ).verdict,
    ).toBe(true);
  });

  it("throws (the guardrail's on_error decides) when the key set cannot be read", async () => {
    const uri = jwksUri();
    const env = fakeEnvironment({ getJson: () => ({ status: 503, json: undefined }) });
    const input = checkInput({ text: "hi", headers: { authorization: `Bearer ${await token()}` }, env });
    await expect(runCheck("default.jwt", { jwksUri: uri }, input)).rejects.toThrow("answered HTTP 503");
    const notJwks = fakeEnvironment({ getJson: () => ({ status: 200, json: { hello: "world" } }) });
    const input2 = checkInput({ text: "hi", headers: { authorization: `Bearer ${await token()}` }, env: notJwks });
    await expect(runCheck("default.jwt", { jwksUri: jwksUri() }, input2)).rejects.toThrow("JSON Web Key Set");
  });

  it("validates its parameters (Portkey's names) when saved", async () => {
    const spec = { id: "default.jwt", parameters: { jwksUri: "https://auth.example.com/jwks.json" } };
    expect(await problemOf(spec.id, spec.parameters)).toBeUndefined();
    expect(await problemOf("default.jwt", {})).toMatchObject({ path: "parameters.jwksUri" });
    expect(await problemOf("default.jwt", { jwksUri: "file:///etc/jwks.json" })).toMatchObject({
      path: "parameters.jwksUri",
    });
    expect(await problemOf("default.jwt", { jwksUri: "https://a.example/j", algorithms: ["HS256"] })).toMatchObject({
      path: "parameters.algorithms.0",
    });
    expect(await problemOf("default.jwt", { jwksUri: "https://a.example/j", maxTokenAge: "forever" })).toMatchObject({
      path: "parameters.maxTokenAge",
    });
    expect(await problemOf("default.jwt", { jwksUri: "https://a.example/j", headerKey: "bad header" })).toMatchObject({
      path: "parameters.headerKey",
    });
    expect(await problemOf("default.jwt", { jwksUri: "https://a.example/j" }, "output")).toMatchObject({ path: "id" });
  });
});
