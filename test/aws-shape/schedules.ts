import { randomUUID } from "node:crypto";

/**
 * An EventBridge schedule rule invoking its function: every `everySeconds` an asynchronous invocation with a
 * "Scheduled Event", whether or not the previous one has finished (each may land on another instance). `tick`
 * invokes it once now and answers its result, for tests that cannot wait for the next period.
 */

export interface Schedule {
  tick(): Promise<unknown>;
  stop(): void;
}

export function startSchedule(options: {
  name: string;
  everySeconds: number;
  invoke(event: unknown): Promise<unknown>;
  log(line: string): void;
}): Schedule {
  const tick = () =>
    options.invoke({
      version: "0",
      id: randomUUID(),
      "detail-type": "Scheduled Event",
      source: "aws.events",
      account: "123456789012",
      time: new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
      region: "us-east-1",
      resources: [`arn:aws:events:us-east-1:123456789012:rule/${options.name}`],
      detail: {},
    });
  const timer = setInterval(() => {
    tick().catch((error) => options.log(`schedule ${options.name}: invocation failed: ${(error as Error).message}`));
  }, options.everySeconds * 1000);
  timer.unref();
  return { tick, stop: () => clearInterval(timer) };
}
