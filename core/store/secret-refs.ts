/**
 * Secret references (issue 28): a provider credential may be stored as a pointer to where the secret lives
 * instead of its value, resolved when a request uses it:
 * - `secretsmanager:<arn or name>[#json-key]` (AWS Secrets Manager; `#key` picks a field of a JSON secret),
 * - `ssm:<parameter name>` (AWS SSM Parameter Store, decrypted),
 * - `env:<VAR>` and `file:<path>` (local platform; files only under GATEWAY_SECRET_FILES_DIR).
 * The port resolves them; each platform has its adapter (core/platform/aws, core/platform/local).
 * Resolved values are never logged nor returned; errors name the reference's kind, never a value.
 *
 * A reference reads what the gateway's process can read, so it is confined (issue 38): each platform admits
 * only names inside a namespace the operator configures (`env:` variables with GATEWAY_SECRET_REF_ENV_PREFIX,
 * files under GATEWAY_SECRET_FILES_DIR, AWS names under GATEWAY_SECRET_REF_PREFIX; none configured: none
 * admitted), only a principal holding `secret_references.create` may save one, and a reference resolves only
 * for the organisation that first saved it (core/control/secret-ref-owners.ts).
 */

export type SecretRef =
  | { scheme: "secretsmanager"; id: string; jsonKey?: string }
  | { scheme: "ssm"; name: string }
  | { scheme: "env"; name: string }
  | { scheme: "file"; path: string };

export type SecretRefFailure = "invalid" | "unsupported" | "not_found" | "unavailable";

/** Why a reference could not be resolved. The message never holds a secret value. */
export class SecretRefError extends Error {
  readonly reason: SecretRefFailure;
  constructor(reason: SecretRefFailure, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = "SecretRefError";
    this.reason = reason;
  }
}

export interface SecretResolver {
  /**
   * Throws SecretRefError ("unsupported" or "invalid") unless the reference is inside the namespace the operator
   * configured for this platform. Reads nothing: a reference is checked when saved, before anything exists.
   */
  admit(ref: SecretRef): void;
  /** The secret's current value; SecretRefError when it cannot be had (an unadmitted reference included). */
  resolve(ref: SecretRef): Promise<string>;
}

const SCHEME = /^(secretsmanager|ssm|env|file):/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,255}$/;
const PRINTABLE = /^[\x21-\x7e]+$/;

/** True when the value is written as a reference (whether or not it is a valid one). */
export const looksLikeSecretRef = (value: string): boolean => SCHEME.test(value);

/**
 * The reference a credential value stands for; undefined for a plain value. A value with a reference scheme
 * that is malformed is SecretRefError("invalid") rather than a plain value, so a typo is never sent upstream.
 */
export function parseSecretRef(value: string): SecretRef | undefined {
  const match = SCHEME.exec(value);
  if (!match) return undefined;
  const scheme = match[1] as SecretRef["scheme"];
  const rest = value.slice(match[0].length);
  if (!rest || rest.length > 2048)
    throw new SecretRefError("invalid", `The ${scheme}: reference is empty or too long.`);
  if (scheme === "env") {
    if (!ENV_NAME.test(rest)) throw new SecretRefError("invalid", "env: references name a variable (A-Z, 0-9, _).");
    return { scheme, name: rest };
  }
  if (scheme === "file") {
    if (rest.includes("\0") || rest.split(/[\\/]/).includes(".."))
      throw new SecretRefError("invalid", "file: references may not leave the secret files directory.");
    return { scheme, path: rest };
  }
  if (!PRINTABLE.test(rest)) throw new SecretRefError("invalid", `The ${scheme}: reference holds invalid characters.`);
  if (scheme === "ssm") return { scheme, name: rest };
  const hash = rest.indexOf("#");
  if (hash === -1) return { scheme, id: rest };
  const id = rest.slice(0, hash);
  const jsonKey = rest.slice(hash + 1);
  if (!id || !jsonKey)
    throw new SecretRefError("invalid", "secretsmanager: references read `<arn or name>#<json key>`.");
  return { scheme, id, jsonKey };
}

/** The reference written back as text (cache keys). */
export function formatSecretRef(ref: SecretRef): string {
  switch (ref.scheme) {
    case "secretsmanager":
      return `secretsmanager:${ref.id}${ref.jsonKey === undefined ? "" : `#${ref.jsonKey}`}`;
    case "ssm":
      return `ssm:${ref.name}`;
    case "env":
      return `env:${ref.name}`;
    case "file":
      return `file:${ref.path}`;
  }
}

/** Where no adapter is configured: every reference is unsupported. */
const unavailable = (ref: SecretRef) =>
  new SecretRefError("unsupported", `${ref.scheme}: references are not available on this gateway.`);
export const NO_SECRET_REFS: SecretResolver = {
  admit: (ref) => {
    throw unavailable(ref);
  },
  resolve: (ref) => Promise.reject(unavailable(ref)),
};

/**
 * Keeps resolved values for a short while (GATEWAY_SECRET_REF_CACHE_SECONDS) so hot paths do not call the
 * secret store on every request, and shares one lookup among concurrent requests. Failures are not kept.
 */
export class CachingSecretResolver implements SecretResolver {
  readonly #inner: SecretResolver;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { value: Promise<string>; expiresAt: number }>();

  constructor(inner: SecretResolver, ttlMs: number, now: () => number = Date.now) {
    this.#inner = inner;
    this.#ttlMs = ttlMs;
    this.#now = now;
  }

  admit(ref: SecretRef): void {
    this.#inner.admit(ref);
  }

  resolve(ref: SecretRef): Promise<string> {
    const key = formatSecretRef(ref);
    const now = this.#now();
    const cached = this.#entries.get(key);
    if (cached && cached.expiresAt > now) return cached.value;
    const value = this.#inner.resolve(ref);
    if (this.#ttlMs <= 0) return value;
    this.#entries.set(key, { value, expiresAt: now + this.#ttlMs });
    value.catch(() => {
      if (this.#entries.get(key)?.value === value) this.#entries.delete(key);
    });
    // Bounded: expired entries go when the map grows (references are few; this is a guard, not an LRU).
    if (this.#entries.size > 1000) {
      for (const [name, entry] of this.#entries) if (entry.expiresAt <= now) this.#entries.delete(name);
    }
    return value;
  }
}
