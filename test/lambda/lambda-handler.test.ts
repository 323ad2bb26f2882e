import { lambdaEnv } from "../helpers/aws-stores.ts";
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { StreamingLambdaHandler } from "../../core/platform/aws/function-url-handler.ts";
import { createTable } from "../setup/emulators.ts";
import { installAwsLambdaGlobal, invoke } from "./awslambda-runtime.ts";
import { functionUrlEvent } from "./fake-app.ts";

/**
 * The functions/<family>.ts entry points as Lambda runs them: configured only by the environment infra/
 * sets (plus the AWS_* variables of the runtime, pointed at the emulators), with a fresh table so this file
 * bootstraps its own organisation.
 */

const ADMIN_KEY = `gk-test-${randomUUID()}`;
const savedEnv = { ...process.env };

let health: StreamingLambdaHandler;
let models: StreamingLambdaHandler;

beforeAll(async () => {
  const emulators = inject("emulators");
  const tableName = `lambda-${randomUUID()}`;
  await createTable(emulators.dynamodb, tableName);
  Object.assign(process.env, { ...lambdaEnv(emulators, tableName), GATEWAY_BOOTSTRAP_ADMIN_KEY: ADMIN_KEY });
  installAwsLambdaGlobal();
  ({ handler: health } = await import("../../functions/health.ts"));
  ({ handler: models } = await import("../../functions/models.ts"));
});

afterAll(() => {
  process.env = savedEnv;
});

const body = (bytes: Uint8Array) => JSON.parse(Buffer.from(bytes).toString("utf8"));

describe("route family functions", () => {
  it("serve their family's routes", async () => {
    const result = await invoke(health, functionUrlEvent("GET", "/health"));
    expect(result.prelude.statusCode).toBe(200);
    expect(body(result.body)).toEqual({ status: "ok" });
  });

  it("serve only their own family", async () => {
    const result = await invoke(health, functionUrlEvent("GET", "/v1/models"));
    expect(result.prelude.statusCode).toBe(404);
  });

  it("bootstrap the organisation with the admin key from the environment", async () => {
    const anonymous = await invoke(models, functionUrlEvent("GET", "/v1/models"));
    expect(anonymous.prelude.statusCode).toBe(401);
    expect(body(anonymous.body).error.type).toBe("authentication_error");

    const admin = await invoke(
      models,
      functionUrlEvent("GET", "/v1/models", { headers: { "x-gateway-api-key": ADMIN_KEY } }),
    );
    expect(admin.prelude.statusCode).toBe(200);
    expect(body(admin.body).object).toBe("list");
  });
});
