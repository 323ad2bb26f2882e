/**
 * Process-wide settings from the environment, validated once at start. Every variable is documented in the
 * docs/configuration.md; unknown values fail start-up with a clear message instead of misbehaving later.
 *
 * Plain parsers rather than a zod schema: every Lambda cold start reads the settings, and building a schema
 * (zod's first one pays for zod's own set-up) would weigh on every data-plane function's init.
 */

/** Turns one variable's raw value into its setting, or throws a SettingError saying what was expected. */
type Parser<T> = (raw: string | undefined) => T;

class SettingError extends Error {}

const optionalString: Parser<string | undefined> = (raw) => raw;

const stringWithDefault =
  (fallback: string): Parser<string> =>
  (raw) =>
    raw ?? fallback;

const booleanFlag: Parser<boolean> = (raw) => raw !== undefined && /^(1|true|yes|on)$/i.test(raw.trim());

const positiveInt =
  (fallback: number, min = 1, max = Number.MAX_SAFE_INTEGER): Parser<number> =>
  (raw) => {
    if (raw === undefined || raw.trim() === "") return fallback;
    const parsed = Number(raw);
    if (!Number.isInteger(parsed) || parsed < min || parsed > max)
      throw new SettingError(
        `expected an integer ${max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`}, got '${raw}'`,
      );
    return parsed;
  };

/** An integer from `min` to `max`, or undefined when unset (the platform then picks a value of its own). */
const optionalInt =
  (min: number, max: number): Parser<number | undefined> =>
  (raw) =>
    raw === undefined || raw.trim() === "" ? undefined : positiveInt(min, min, max)(raw);

const commaList: Parser<string[]> = (raw) =>
  (raw ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter(Boolean);

const oneOf =
  <const T extends string>(values: readonly T[], fallback: T): Parser<T> =>
  (raw) => {
    if (raw === undefined) return fallback;
    if ((values as readonly string[]).includes(raw)) return raw as T;
    throw new SettingError(`expected one of ${values.join(", ")}, got '${raw}'`);
  };

const optionalUrl: Parser<string | undefined> = (raw) => {
  if (raw === undefined) return undefined;
  if (!URL.canParse(raw)) throw new SettingError(`expected an absolute URL, got '${raw}'`);
  return raw;
};

const optionalJwks: Parser<string | undefined> = (raw) => {
  if (raw === undefined) return undefined;
  let keys: unknown;
  try {
    keys = JSON.parse(raw)?.keys;
  } catch {
    // reported below
  }
  if (!Array.isArray(keys)) throw new SettingError('expected a JSON Web Key Set ({"keys": [...]})');
  return raw;
};

/**
 * GATEWAY_MAX_HEADER_BYTES by default: 512 KB. Node's own limit (--max-http-header-size) is 16 KB, too small for
 * an inline `x-gateway-config`; the largest one spec 8 allows (1,000 conditional targets), with a provider key
 * and a model per target and a condition each, is about 300 KB (test/e2e/hostile-input.test.ts). The local server
 * passes this as its maxHeaderSize, so Node's flag plays no part.
 */
export const DEFAULT_MAX_HEADER_BYTES = 512 * 1024;

const SETTINGS = {
  GATEWAY_PLATFORM: oneOf(["local", "aws"], "local"),
  PORT: positiveInt(8787, 0), // 0 picks a free port (tests)
  HOST: stringWithDefault("0.0.0.0"),
  GATEWAY_DATA_DIR: stringWithDefault(".gateway"),
  GATEWAY_PUBLIC_URL: optionalString,
  GATEWAY_MAX_JSON_BODY_BYTES: positiveInt(25 * 1024 * 1024),
  GATEWAY_MAX_UPLOAD_BYTES: positiveInt(512 * 1024 * 1024),
  // Deepest nesting of objects/arrays in a JSON body or config (core/http/json.ts): deeper answers 400.
  GATEWAY_MAX_JSON_DEPTH: positiveInt(128),
  // Total bytes of a request's header block (core/platform/local/server.ts): larger answers 431.
  GATEWAY_MAX_HEADER_BYTES: positiveInt(DEFAULT_MAX_HEADER_BYTES, 16 * 1024),
  GATEWAY_API_KEY_CACHE_SECONDS: positiveInt(30),
  // Guardrails on long texts (core/inference/guardrails/budget.ts): the characters a request's checks may read in all (a
  // check past it follows its guardrail's on_error), and the worker threads that judge checks of long texts
  // (local platform; unset: one a core beyond the event loop's, 1 to 4; 0: none, every check on the event loop).
  GATEWAY_GUARDRAIL_BUDGET_CHARS: positiveInt(32 * 1024 * 1024),
  GATEWAY_GUARDRAIL_THREADS: optionalInt(0, 64),
  // How long a request's body may take to arrive on the local server, from its headers (408 past it).
  GATEWAY_BODY_TIMEOUT_MS: positiveInt(300_000, 1000, 2 ** 31 - 1),
  REQUEST_TIMEOUT: positiveInt(300_000, 1, 2 ** 31 - 1), // timers hold at most 2^31-1 ms
  TRUSTED_CUSTOM_HOSTS: commaList,
  BLOCK_INLINE_CONFIG: booleanFlag,
  ORGANISATION_HEADERS_TO_MASK: commaList,
  ENABLE_PROMETHEUS: booleanFlag,
  // Experimental OpenTelemetry spans of guardrail runs (core/inference/guardrails/spans.ts).
  EXPERIMENTAL_GEN_AI_OTEL_TRACES_ENABLED: booleanFlag,
  GATEWAY_WORKER_POLL_MS: positiveInt(1000),
  // Local queue worker (core/platform/local/worker-loop.ts): seconds a received message stays hidden before it is
  // delivered again (after a crash), and receives in flight on the batches queue (10 messages each).
  GATEWAY_QUEUE_VISIBILITY_SECONDS: positiveInt(300, 1, 43_200),
  GATEWAY_BATCH_WORKERS: positiveInt(4, 1, 64),
  // Batches (core/features/batches): most requests (lines) in one batch's input file.
  GATEWAY_BATCH_MAX_LINES: positiveInt(50_000, 1, 1_000_000),
  GATEWAY_LOG_RETENTION_DAYS: positiveInt(30),
  GATEWAY_LOG_BODIES: ((raw) => raw === undefined || !/^(0|false|no|off)$/i.test(raw.trim())) as Parser<boolean>,
  LOG_STORE_CONNECTION_FAILURE_THRESHOLD: positiveInt(5),
  LOG_STORE_CONNECTION_BACKOFF_MS: positiveInt(60_000),
  LOG_STORE_CONNECTION_TIMEOUT_MS: positiveInt(15_000),
  // Where the local server keeps its state (core/platform/local/gateway.ts): `embedded` (SQLite and a folder under
  // GATEWAY_DATA_DIR, one process) or `mysql` (core/platform/mysql: MySQL 8 / MariaDB shared by several processes).
  GATEWAY_STORE: oneOf(["embedded", "mysql"], "embedded"),
  // MySQL store (docs/self-hosting.md): DATABASE_URL (mysql://user:password@host:port/database) or the parts.
  DATABASE_URL: optionalString,
  DB_HOST: optionalString,
  DB_PORT: positiveInt(3306, 1, 65_535),
  DB_USER: optionalString,
  DB_PASSWORD: optionalString,
  DB_NAME: optionalString,
  DB_POOL_SIZE: positiveInt(12, 1, 1000),
  // TLS to the database: `off`, `on` (verified against the system CAs or DB_TLS_CA_FILE), `skip-verify`.
  DB_TLS: oneOf(["off", "on", "skip-verify"], "off"),
  DB_TLS_CA_FILE: optionalString,
  // Request logs on another database (server) than the rest; the same one by default.
  LOG_STORE_DATABASE_URL: optionalString,
  // Logs the log store could not take, kept on local disk until it is back: where, and how much at most.
  GATEWAY_LOG_BUFFER_DIR: optionalString,
  GATEWAY_LOG_BUFFER_MAX_MB: positiveInt(512, 1, 1_000_000),
  // The 32-byte base64 master key in a file (a mounted secret) instead of GATEWAY_MASTER_KEY.
  GATEWAY_MASTER_KEY_FILE: optionalString,
  // Blobs of the MySQL store: an S3-compatible bucket (GATEWAY_BUCKET) or a folder every process mounts.
  GATEWAY_BLOB_STORE: oneOf(["s3", "folder"], "s3"),
  GATEWAY_BLOB_DIR: optionalString,
  GATEWAY_S3_ENDPOINT: optionalUrl,
  GATEWAY_S3_PUBLIC_ENDPOINT: optionalUrl,
  GATEWAY_S3_REGION: stringWithDefault("us-east-1"),
  GATEWAY_S3_FORCE_PATH_STYLE: ((raw) =>
    raw === undefined || !/^(0|false|no|off)$/i.test(raw.trim())) as Parser<boolean>,
  // Stored responses (core/features/responses): kept this many days, then absent (GET /v1/responses/{id} answers 404).
  GATEWAY_RESPONSES_RETENTION_DAYS: positiveInt(30, 1, 3650),
  GATEWAY_INVITE_TTL_HOURS: positiveInt(168), // invites (core/routes/handlers/users.ts)
  // Response cache (docs/caching.md): max_age when a config gives none, and the largest answer stored.
  GATEWAY_CACHE_MAX_AGE: positiveInt(7 * 24 * 3600, 1, 90 * 24 * 3600),
  GATEWAY_CACHE_MAX_ENTRY_BYTES: positiveInt(1024 * 1024, 1, 64 * 1024 * 1024),
  // JWT authentication (spec 5.4; core/auth/jwt.ts)
  GATEWAY_JWT_JWKS_URL: optionalUrl,
  GATEWAY_JWT_JWKS: optionalJwks,
  GATEWAY_JWT_ISSUER: optionalString,
  GATEWAY_JWT_AUDIENCE: optionalString,
  GATEWAY_JWT_CLOCK_TOLERANCE_SECONDS: positiveInt(30, 0),
  // Semantic cache vector index (core/store): entries kept on the local platform, oldest removed first
  GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES: positiveInt(100_000),
  GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES_PER_SCOPE: positiveInt(100_000),
  // Realtime WebSocket sessions (core/inference/realtime): closed after this long without an event either way, and after
  // this long in all; the largest message relayed (1009 past it), and the bytes one direction may have queued
  // for a slow reader before the session closes 1013.
  GATEWAY_REALTIME_IDLE_SECONDS: positiveInt(600, 1, 86_400),
  GATEWAY_REALTIME_MAX_SESSION_SECONDS: positiveInt(3600, 1, 86_400),
  GATEWAY_REALTIME_MAX_MESSAGE_BYTES: positiveInt(16 * 1024 * 1024, 1024),
  GATEWAY_REALTIME_MAX_BUFFERED_BYTES: positiveInt(32 * 1024 * 1024, 1024),
  // AWS platform
  GATEWAY_TABLE: optionalString,
  GATEWAY_BUCKET: optionalString,
  GATEWAY_QUEUE_URLS: optionalString,
  GATEWAY_MASTER_KEY: optionalString,
  GATEWAY_KMS_KEY_ID: optionalString,
  // S3 Vectors bucket of the semantic cache, and the dimensions it has an index for (infra/vectors.ts)
  GATEWAY_VECTOR_BUCKET: optionalString,
  GATEWAY_VECTOR_DIMENSIONS: commaList,
  GATEWAY_BOOTSTRAP_ADMIN_KEY: optionalString,
  // SSO console sessions (core/identity/sso/sessions.ts): how long a sign-in lasts
  GATEWAY_SESSION_TTL_SECONDS: positiveInt(8 * 3600, 60, 30 * 86_400),
  // Secret references in provider credentials (core/store/secret-refs.ts): how long a resolved value is kept,
  // the prefix `env:` references' variable names must have (local; unset: no env: reference), the only folder
  // `file:` references may read (local), the name prefix `secretsmanager:`/`ssm:` references must have (AWS;
  // infra scopes the IAM permissions to it; unset: no AWS reference).
  GATEWAY_SECRET_REF_CACHE_SECONDS: positiveInt(60, 0, 3600),
  GATEWAY_SECRET_REF_ENV_PREFIX: stringWithDefault(""),
  GATEWAY_SECRET_FILES_DIR: optionalString,
  GATEWAY_SECRET_REF_PREFIX: stringWithDefault(""),
  // Self-hosted deployment self-report (core/platform/local/deployment-heartbeat.ts): off unless both the
  // control plane's URL and a deployment key are set.
  GATEWAY_CONTROL_PLANE_URL: optionalUrl,
  GATEWAY_DEPLOYMENT_KEY: optionalString,
  GATEWAY_DEPLOYMENT_NAME: stringWithDefault("local-gateway"),
  GATEWAY_DEPLOYMENT_HEARTBEAT_SECONDS: positiveInt(60, 1, 86_400),
  // The most of an upstream's answer the gateway reads whole (core/util/read-bounded.ts; 502
  // upstream_response_too_large past it): a provider's JSON answer (streams relayed as they come are not
  // limited), an MCP server's answer, an A2A agent's.
  GATEWAY_MAX_UPSTREAM_RESPONSE_BYTES: positiveInt(128 * 1024 * 1024, 1024),
  MCP_MAX_RESPONSE_BYTES: positiveInt(16 * 1024 * 1024, 1024),
  AGENT_MAX_RESPONSE_BYTES: positiveInt(16 * 1024 * 1024, 1024),
  // MCP gateway (core/features/mcp; docs/mcp.md)
  // How MCP request logs keep a call's arguments: a hash (default), the structure with every value masked, or
  // in full (also what the OTLP export sends).
  MCP_LOG_ARGUMENTS: oneOf(["hash", "masked", "full"], "hash"),
  // Browser origins allowed to call the MCP endpoint besides GATEWAY_PUBLIC_URL's and loopback ones (DNS
  // rebinding protection; requests without an Origin header are not affected).
  MCP_ALLOWED_ORIGINS: commaList,
  // How long one call to an upstream MCP server may take.
  MCP_UPSTREAM_TIMEOUT_MS: positiveInt(60_000, 1000, 900_000),
  // A tool call still running after this long is answered as a task (MCP Tasks extension), for callers that
  // declared the extension; the call goes on and its result is kept in Records for MCP_TASK_TTL_MS.
  MCP_TASK_AFTER_MS: positiveInt(5_000, 10, 900_000),
  MCP_TASK_TTL_MS: positiveInt(3_600_000, 60_000, 86_400_000),
  // An MCP answer not ready this soon becomes an event stream with a comment this often until it comes, so that a
  // proxy's read timeout (CloudFront's 60 s on AWS, nginx's 60 s by default) never cuts a call still going.
  MCP_SSE_KEEPALIVE_MS: positiveInt(15_000, 500, 50_000),
  // OTLP/HTTP JSON export of MCP request logs (standard OpenTelemetry variables; off unless an endpoint is set).
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_LOGS_ENDPOINT: optionalUrl,
  OTEL_EXPORTER_OTLP_HEADERS: optionalString,
  OTEL_EXPORTER_OTLP_LOGS_HEADERS: optionalString,
  OTEL_SERVICE_NAME: stringWithDefault("ai-gateway"),
  OTEL_BLRP_MAX_QUEUE_SIZE: positiveInt(2048, 1, 1_000_000),
  OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: positiveInt(512, 1, 100_000),
  OTEL_BLRP_SCHEDULE_DELAY: positiveInt(1000, 0, 600_000),
  OTEL_BLRP_EXPORT_TIMEOUT: positiveInt(30_000, 1, 600_000),

  // OAuth 2.1 server for MCP clients (core/features/mcp/oauth)
  GATEWAY_OAUTH_ACCESS_TOKEN_TTL_SECONDS: positiveInt(3600, 60, 86_400),
  GATEWAY_OAUTH_REFRESH_TOKEN_TTL_SECONDS: positiveInt(30 * 86_400, 300, 365 * 86_400),
  // A registered client that never gets a token is forgotten after this; each grant extends it.
  GATEWAY_OAUTH_UNUSED_CLIENT_TTL_SECONDS: positiveInt(86_400, 60, 30 * 86_400),
  // Dynamic client registrations the whole gateway accepts per hour (anonymous: this bounds the store).
  GATEWAY_OAUTH_REGISTRATIONS_PER_HOUR: positiveInt(200, 1, 1_000_000),

  // Server-side MCP tools (core/features/mcp/server-side)
  // Model calls one request may make while the gateway runs server-side MCP tools (beta server-side-mcp-2026-06-01).
  GATEWAY_MCP_MAX_TOOL_STEPS: positiveInt(8, 1, 64),

  // Agents gateway (core/features/agents)
  // Timeout of one agent card fetch (registering an agent, POST /v2/agent-integrations/fetch-agent-card).
  AGENT_CARD_FETCH_TIMEOUT_MS: positiveInt(10_000, 1, 120_000),

  // Web console (console/)
} satisfies Record<string, Parser<unknown>>;

export type Settings = { [Name in keyof typeof SETTINGS]: ReturnType<(typeof SETTINGS)[Name]> };

/** Every environment variable the gateway reads (docs/configuration.md documents each). */
export const SETTING_NAMES = Object.keys(SETTINGS);

export function loadSettings(env: Record<string, string | undefined> = process.env): Settings {
  const settings: Record<string, unknown> = {};
  const problems: string[] = [];
  for (const [name, parse] of Object.entries(SETTINGS) as Array<[string, Parser<unknown>]>) {
    try {
      settings[name] = parse(env[name]);
    } catch (error) {
      if (!(error instanceof SettingError)) throw error;
      problems.push(`${name}: ${error.message}`);
    }
  }
  if (problems.length > 0) throw new Error(`Invalid gateway settings: ${problems.join("; ")}`);
  return settings as Settings;
}
