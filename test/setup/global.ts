/**
 * Vitest global setup: starts the AWS emulators once for the whole run and hands their endpoints to test
 * files through provide/inject (`inject("emulators")`).
 */
import type { TestProject } from "vitest/node";
import { type EmulatorEndpoints, startEmulators } from "./emulators.ts";

declare module "vitest" {
  interface ProvidedContext {
    emulators: EmulatorEndpoints;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulators = await startEmulators();
  project.provide("emulators", emulators.endpoints);
  return () => emulators.stop();
}
