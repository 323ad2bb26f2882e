/**
 * The local gateway in a child process of its own (started with `node --expose-gc`), so a test can measure the
 * gateway's memory apart from the test's: it sends `{url, adminKey}` once listening, and answers each
 * `"memory"` message with its memory use after a full garbage collection, and `"usage"` without one.
 * Run by startGatewayProcess (test/helpers/gateway-process-client.ts).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startLocalGateway } from "../../core/platform/local/gateway.ts";

const env = JSON.parse(process.env.GATEWAY_TEST_ENV ?? "{}") as Record<string, string>;
const dataDir = mkdtempSync(join(tmpdir(), "gateway-process-"));
const gateway = await startLocalGateway({
  PORT: "0",
  HOST: "127.0.0.1",
  GATEWAY_DATA_DIR: dataDir,
  TRUSTED_CUSTOM_HOSTS: "127.0.0.1,localhost",
  ...env,
});

const gc = (globalThis as { gc?: () => void }).gc;
process.on("message", async (message: string) => {
  if (message === "memory") {
    // Twice, with a pause: finalizers and weak references of the first collection are freed by the second.
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 100));
    gc?.();
    process.send!({ memory: process.memoryUsage() });
  } else if (message === "usage") {
    process.send!({ memory: process.memoryUsage() });
  } else if (message === "close") {
    await gateway.close();
    rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  }
});
process.send!({ url: gateway.url, adminKey: gateway.bootstrap.adminApiKey });
