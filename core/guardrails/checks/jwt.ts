import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey, jwtVerify } from "jose";
import * as z from "zod";
import { sha256Hex } from "../../ids.ts";
import { TtlCache } from "../../util/ttl-cache.ts";
import type { CheckDefinition, CheckInput, CheckResult } from "../types.ts";
import { readsNoText } from "../budget.ts";

/**
 * `default.jwt`: passes when the request carries a JWT (in `headerKey`, default `Authorization`, a `Bearer `
 * prefix removed) signed by a key of the JWKS at `jwksUri`, unexpired (with `clockTolerance` seconds of slack),
 * issued at most `maxTokenAge` ago, and from `issuer` / for `audience` when those are given. Portkey's parameters.
 * Input phase.
 *
 * The key set is fetched with the check environment's `getJson` (the gateway's SSRF rules, never jose's own
 * fetch) and kept `cacheMaxAge` seconds; a token naming a key the set lacks (a rotated key) fetches it again, at
 * most every REFETCH_COOLDOWN_MS. A key set that cannot be read says nothing about the token: the check throws,
 * and the guardrail's `on_error` decides (`closed` refuses the request). Only asymmetric algorithms are accepted:
 * a published key set cannot hold a shared secret. The token never appears in the verdict.
 */

const ASYMMETRIC = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519",
] as const;
const FETCH_TIMEOUT_MS = 5_000;
const REFETCH_COOLDOWN_MS = 30_000;
// jose's time spans: 90, "90s", "15 minutes", "1d", "2w"...
const TIME_SPAN =
  /^\d{1,9}(\.\d{1,3})? ?(s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?|w|weeks?|y|yrs?|years?)$/i;

const httpUrl = z
  .string()
  .max(2_048)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), "an http(s) URL");

const oneOrMany = z.union([z.string().min(1).max(500), z.array(z.string().min(1).max(500)).min(1).max(20)]);

const parameters = z.object({
  jwksUri: httpUrl,
  headerKey: z
    .string()
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/, "an HTTP header name")
    .default("Authorization"),
  algorithms: z
    .array(z.enum(ASYMMETRIC))
    .min(1)
    .default([...ASYMMETRIC]),
  /** Seconds the key set is kept (0: fetched for every request). */
  cacheMaxAge: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400)
    .default(86_400),
  clockTolerance: z.number().min(0).max(3_600).default(5),
  maxTokenAge: z
    .union([z.string().regex(TIME_SPAN, "a time span such as 1d, 12h or 30m"), z.number().positive()])
    .default("1d"),
  issuer: oneOrMany.optional(),
  audience: oneOrMany.optional(),
});

type Parameters = z.infer<typeof parameters>;

interface CachedKeySet {
  keys: JWTVerifyGetKey;
  fetchedAt: number;
}

// Per key-set URL (hashed: a URL may carry a token of its own). Promises, so concurrent requests share a fetch.
const keySets = new TtlCache<string, Promise<CachedKeySet>>({ ttlMs: 86_400_000, maxEntries: 100 });

function keySetFor(uri: string, cacheMaxAge: number, input: CheckInput, refresh = false): Promise<CachedKeySet> {
  const key = sha256Hex(uri);
  const cached = refresh || cacheMaxAge === 0 ? undefined : keySets.get(key);
  if (cached) return cached;
  const fetched = (async () => {
    const { status, json } = await input.env.getJson(uri, { timeoutMs: FETCH_TIMEOUT_MS, signal: input.signal });
    if (status < 200 || status > 299) throw new Error(`default.jwt: the key set at jwksUri answered HTTP ${status}`);
    if (!json || typeof json !== "object" || !Array.isArray((json as JSONWebKeySet).keys)) {
      throw new Error('default.jwt: jwksUri did not answer a JSON Web Key Set ({"keys": [...]})');
    }
    return { keys: createLocalJWKSet(json as JSONWebKeySet), fetchedAt: Date.now() };
  })();
  if (cacheMaxAge > 0) {
    keySets.set(key, fetched, cacheMaxAge * 1_000);
    fetched.catch(() => keySets.deleteIf(key, fetched));
  }
  return fetched;
}

const refused = (explanation: string, data: Record<string, unknown> = {}): CheckResult => ({
  verdict: false,
  explanation,
  data,
});

function tokenFault(error: unknown): CheckResult | undefined {
  if (error instanceof errors.JWTExpired) {
    // jose says "expired" both past `exp` and past `maxTokenAge` (then about `iat`).
    return error.claim === "iat"
      ? refused("The JWT was issued longer ago than maxTokenAge allows.", { reason: "too_old" })
      : refused("The JWT has expired.", { reason: "expired" });
  }
  if (error instanceof errors.JWTClaimValidationFailed) {
    return refused(`The JWT's '${error.claim}' claim is not accepted (${error.reason}).`, {
      reason: "claim",
      claim: error.claim,
    });
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return refused("The JWT's signature does not verify.", { reason: "signature" });
  }
  if (error instanceof errors.JWKSNoMatchingKey)
    return refused("No key of the key set matches the JWT.", { reason: "no_key" });
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return refused("The JWT is signed with an algorithm that is not allowed.", { reason: "algorithm" });
  }
  if (error instanceof errors.JWKSMultipleMatchingKeys) {
    return refused("Several keys of the key set match the JWT and none verifies it.", { reason: "signature" });
  }
  if (
    error instanceof errors.JWSInvalid ||
    error instanceof errors.JWTInvalid ||
    error instanceof errors.JOSENotSupported
  ) {
    return refused("The token is not a valid signed JWT.", { reason: "malformed" });
  }
  return undefined;
}

export const jwt: CheckDefinition<Parameters> = {
  id: "default.jwt",
  description: "Passes when the request carries a JWT that verifies against a JWKS (expiry, age, issuer, audience).",
  phases: ["input"],
  parameters,
  // Reads one request header (bounded by the header size limit), never the texts.
  cost: readsNoText,
  async run(input, parameters) {
    const { jwksUri, headerKey, algorithms, cacheMaxAge, clockTolerance, maxTokenAge, issuer, audience } = parameters;
    const header = input.headers.get(headerKey);
    if (!header) return refused(`The request has no ${headerKey} header.`, { reason: "missing" });
    const token = header.replace(/^Bearer\s+/i, "").trim();
    if (!token) return refused(`The ${headerKey} header holds no token.`, { reason: "missing" });

    const options = { algorithms: [...algorithms], clockTolerance, maxTokenAge, issuer, audience };
    let keySet = await keySetFor(jwksUri, cacheMaxAge, input);
    for (;;) {
      try {
        const { payload, protectedHeader } = await jwtVerify(token, keySet.keys, options);
        return {
          verdict: true,
          explanation: "The JWT verifies against the key set.",
          data: {
            alg: protectedHeader.alg,
            ...(protectedHeader.kid ? { kid: protectedHeader.kid } : {}),
            ...(typeof payload.iss === "string" ? { issuer: payload.iss } : {}),
            ...(typeof payload.sub === "string" ? { subject: payload.sub.slice(0, 200) } : {}),
            ...(typeof payload.exp === "number" ? { expires_at: new Date(payload.exp * 1_000).toISOString() } : {}),
          },
        };
      } catch (error) {
        // A key the set lacks may be a new one: fetch the set again, unless it was fetched moments ago.
        const rotated =
          error instanceof errors.JWKSNoMatchingKey && Date.now() - keySet.fetchedAt > REFETCH_COOLDOWN_MS;
        if (rotated) {
          keySet = await keySetFor(jwksUri, cacheMaxAge, input, true);
          continue;
        }
        const fault = tokenFault(error);
        if (fault) return fault;
        throw error;
      }
    }
  },
};
