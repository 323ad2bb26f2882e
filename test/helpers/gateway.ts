import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LocalGateway, startLocalGateway } from "../../core/platform/local/gateway.ts";

export interface TestGateway {
  /** Base URL without /v1. */
  url: string;
  /** The organisation admin key created at bootstrap. */
  adminKey: string;
  gateway: LocalGateway;
  close(): Promise<void>;
}

/** Starts the real local gateway on a free port with a fresh data dir; mock upstreams on 127.0.0.1 are trusted. */
export async function startTestGateway(env: Record<string, string> = {}): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "gateway-test-"));
  const gateway = await startLocalGateway({
    PORT: "0",
    HOST: "127.0.0.1",
    GATEWAY_DATA_DIR: dataDir,
    TRUSTED_CUSTOM_HOSTS: "127.0.0.1,localhost",
    ...env,
  });
  return {
    url: gateway.url,
    adminKey: gateway.bootstrap.adminApiKey!,
    gateway,
    async close() {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Calls the gateway's JSON API with a key (the admin key by default); answers status and parsed body. */
export function apiCaller(gateway: () => TestGateway) {
  return async (
    method: string,
    path: string,
    body?: unknown,
    key = gateway().adminKey,
  ): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${gateway().url}${path}`, {
      method,
      headers: { "x-gateway-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
}
