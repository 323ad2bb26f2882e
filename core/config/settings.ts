import * as z from "zod";

/**
 * Process-wide settings from the environment, validated once at start. Every variable is documented in the
 * README; unknown values fail start-up with a clear message instead of misbehaving later.
 */
const booleanFlag = z
  .string()
  .optional()
  .transform((value) => value !== undefined && /^(1|true|yes|on)$/i.test(value.trim()));

const positiveInt = (fallback: number, min = 1) =>
  z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === "") return fallback;
      const parsed = Number(value);
      if (!Number.isInteger(parsed) || parsed < min) {
        ctx.addIssue({ code: "custom", message: `expected an integer >= ${min}, got '${value}'` });
        return z.NEVER;
      }
      return parsed;
    });

const commaList = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? "")
      .split(",")
      .map((part) => part.trim())
      .filter(Boolean),
  );

const settingsSchema = z.object({
  GATEWAY_PLATFORM: z.enum(["local", "aws"]).default("local"),
  PORT: positiveInt(8787, 0), // 0 picks a free port (tests)
  HOST: z.string().default("0.0.0.0"),
  GATEWAY_DATA_DIR: z.string().default(".gateway"),
  GATEWAY_PUBLIC_URL: z.string().optional(),
  GATEWAY_MAX_JSON_BODY_BYTES: positiveInt(25 * 1024 * 1024),
  GATEWAY_MAX_UPLOAD_BYTES: positiveInt(512 * 1024 * 1024),
  GATEWAY_API_KEY_CACHE_SECONDS: positiveInt(30),
  REQUEST_TIMEOUT: positiveInt(300_000),
  TRUSTED_CUSTOM_HOSTS: commaList,
  BLOCK_INLINE_CONFIG: booleanFlag,
  ORGANISATION_HEADERS_TO_MASK: commaList,
  ENABLE_PROMETHEUS: booleanFlag,
  GATEWAY_WORKER_POLL_MS: positiveInt(1000),
  GATEWAY_LOG_RETENTION_DAYS: positiveInt(30),
  GATEWAY_LOG_BODIES: z
    .string()
    .optional()
    .transform((value) => value === undefined || !/^(0|false|no|off)$/i.test(value.trim())),
  LOG_STORE_CONNECTION_FAILURE_THRESHOLD: positiveInt(5),
  LOG_STORE_CONNECTION_BACKOFF_MS: positiveInt(60_000),
  LOG_STORE_CONNECTION_TIMEOUT_MS: positiveInt(15_000),
  GATEWAY_INVITE_TTL_HOURS: positiveInt(168), // invites (core/routes/handlers/users.ts)
  // JWT authentication (spec 5.4; core/auth/jwt.ts)
  GATEWAY_JWT_JWKS_URL: z.string().url().optional(),
  GATEWAY_JWT_JWKS: z
    .string()
    .optional()
    .refine((value) => value === undefined || isJwks(value), 'expected a JSON Web Key Set ({"keys": [...]})'),
  GATEWAY_JWT_ISSUER: z.string().optional(),
  GATEWAY_JWT_AUDIENCE: z.string().optional(),
  GATEWAY_JWT_CLOCK_TOLERANCE_SECONDS: positiveInt(30, 0),
  // AWS platform
  GATEWAY_TABLE: z.string().optional(),
  GATEWAY_BUCKET: z.string().optional(),
  GATEWAY_QUEUE_URLS: z.string().optional(),
  GATEWAY_MASTER_KEY: z.string().optional(),
  GATEWAY_KMS_KEY_ID: z.string().optional(),
  GATEWAY_BOOTSTRAP_ADMIN_KEY: z.string().optional(),
});

export type Settings = z.infer<typeof settingsSchema>;

function isJwks(value: string): boolean {
  try {
    return Array.isArray(JSON.parse(value)?.keys);
  } catch {
    return false;
  }
}

/** Every environment variable the gateway reads (the README documents each). */
export const SETTING_NAMES = Object.keys(settingsSchema.shape);

export function loadSettings(env: Record<string, string | undefined> = process.env): Settings {
  const result = settingsSchema.safeParse(env);
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`).join("; ");
  throw new Error(`Invalid gateway settings: ${problems}`);
}
