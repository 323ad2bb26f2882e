import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { newApiKeySecret } from "../../core/auth/api-key-records.ts";
import { TEST_CREDENTIALS } from "../setup/emulators.ts";
import { type BundleGateway, startBundleGateway } from "./bundle-gateway.ts";
import { testDatabaseUrl } from "./mysql-stores.ts";

/**
 * Several gateway processes sharing one MariaDB database (GATEWAY_STORE=mysql), each the bundle `npm start`
 * runs: what a self-hosted deployment with replicas behind a load balancer is. Blobs on the emulators' S3
 * (fauxqs, path-style), one master key and one bootstrap admin key for all, each process its own data folder
 * (its log buffer).
 */
export interface Replicas {
  gateways: BundleGateway[];
  adminKey: string;
  /** The environment every replica got (a test starts another replica with it). */
  env: Record<string, string>;
  start(extra?: Record<string, string>): Promise<BundleGateway>;
  close(): Promise<void>;
}

export async function startReplicas(
  count: number,
  options: { name: string; env?: Record<string, string> },
): Promise<Replicas> {
  const emulators = inject("emulators");
  const adminKey = newApiKeySecret();
  const env: Record<string, string> = {
    GATEWAY_STORE: "mysql",
    DATABASE_URL: await testDatabaseUrl(options.name),
    GATEWAY_MASTER_KEY: randomBytes(32).toString("base64"),
    GATEWAY_BOOTSTRAP_ADMIN_KEY: adminKey,
    GATEWAY_BUCKET: emulators.bucketName,
    GATEWAY_S3_ENDPOINT: emulators.fauxqs,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    ...options.env,
  };
  const gateways: BundleGateway[] = [];
  const start = async (extra: Record<string, string> = {}) => {
    const gateway = await startBundleGateway({ ...env, ...extra }, { adminKey });
    gateways.push(gateway);
    return gateway;
  };
  // Together, as replicas start: the schema migration and the bootstrap must settle between them.
  await Promise.all(Array.from({ length: count }, () => start()));
  return {
    gateways,
    adminKey,
    env,
    start,
    async close() {
      await Promise.all(gateways.map((gateway) => gateway.close()));
    },
  };
}

/** A JSON call to one replica. */
export async function call(
  gateway: { url: string },
  key: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; text: string }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method,
    headers: {
      "x-gateway-api-key": key,
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  return { status: response.status, body: parsed, text };
}
