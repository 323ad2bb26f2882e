import { createLocalStores } from "../../core/platform/local/local-stores.ts";
import type { Stores } from "../../core/store/ports.ts";
import { removeBuiltBundle, startBundleGateway } from "./bundle-gateway.ts";

/**
 * What an end-to-end suite runs against (test/e2e/gateway-suite.ts): the `npm start` bundle, or the whole AWS
 * shape (test/aws-shape/target.ts). Tests talk to `url` over HTTP only; `withStores` reaches the target's own
 * stores for the few records no route writes (saved prompts, MCP servers seeded as an admin tool would).
 */
export interface E2eTarget {
  kind: "bundle" | "aws-shape";
  /** Base URL without /v1. */
  url: string;
  /** An organisation admin API key. */
  adminKey: string;
  withStores<T>(work: (stores: Stores) => Promise<T>): Promise<T>;
  /** Everything the target logged so far. */
  output(): string;
  close(): Promise<void>;
}

/** The `npm start` bundle as a child process (test/helpers/bundle-gateway.ts), on a fresh data folder. */
export async function startBundleTarget(env: Record<string, string> = {}): Promise<E2eTarget> {
  const gateway = await startBundleGateway(env);
  return {
    kind: "bundle",
    url: gateway.url,
    adminKey: gateway.adminKey,
    async withStores(work) {
      // The SQLite files are shared with the running process, as a second process of the same gateway would.
      const stores = createLocalStores({ dataDir: gateway.dataDir, publicBaseUrl: gateway.url });
      try {
        return await work(stores);
      } finally {
        await stores.close();
      }
    },
    output: gateway.output,
    async close() {
      await gateway.close();
      await removeBuiltBundle();
    },
  };
}
