import { appendFileSync } from "node:fs";
import { inject } from "vitest";
import type { E2eTarget } from "../helpers/e2e-target.ts";
import { trustCertificate } from "./certificate.ts";
import { type AwsShape, type AwsShapeOptions, startAwsShape } from "./shape.ts";

/**
 * The AWS shape as an end-to-end target (test/helpers/e2e-target.ts), on the test run's emulators, its Router's
 * certificate trusted by this process's clients. Loopback mock upstreams are trusted custom hosts (as the bundle's
 * tests trust them); queues redeliver after 5 s instead of infra's 30 and 90 minutes, and the scheduled worker
 * runs every 5 s instead of every minute, so a test sees a redelivery or a poll in seconds; idle instances stop
 * after 20 s.
 */
export async function startShapeTarget(options: AwsShapeOptions = {}): Promise<E2eTarget & { shape: AwsShape }> {
  const shape = await startAwsShape({
    emulators: inject("emulators"),
    visibilityTimeoutSeconds: 5,
    scheduleEverySeconds: 5,
    // Idle instances go sooner than on Lambda: a suite touches every function, and each instance holds a heap.
    idleSeconds: 20,
    ...options,
    environment: { TRUSTED_CUSTOM_HOSTS: "127.0.0.1,localhost", ...options.environment },
  });
  trustCertificate(shape.certificate);
  // AWS_SHAPE_LOG=<file>: every log line of the functions and the service, written there when the shape stops.
  const logFile = process.env.AWS_SHAPE_LOG;
  return {
    kind: "aws-shape",
    shape,
    url: shape.url,
    adminKey: shape.adminKey,
    withStores: (work) => work(shape.stores()),
    output: shape.output,
    async close() {
      if (logFile) appendFileSync(logFile, `${shape.output()}\n`);
      await shape.close();
    },
  };
}
