import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileAll } from "../../core/observe/reconciliation/reconcile.ts";
import { readBill } from "../../core/observe/reconciliation/provider-bills.ts";
import { SCHEDULED_TASKS } from "../../core/routes/scheduled-tasks.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, sendJson, startMockServer } from "../helpers/mock-server.ts";
import { type BillingState, billingAnswer } from "../mocks/provider-billing.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Reconciliation against the provider's own bill: an OpenAI integration with an admin key, used through the gateway
 * (its ledger), read against OpenAI's organization costs API (a mock written from its documentation) by the
 * scheduled task; the drift per day recorded and flagged past the threshold, shown by the analytics API to the
 * organisation and to the owning workspace only. Anthropic's cost report is read the same way.
 */

const DAY_MS = 86_400_000;
const today = new Date().toISOString().slice(0, 10);
/** "Tomorrow", so today is a complete day the run reconciles. */
const tomorrow = Date.parse(`${today}T00:00:00Z`) + DAY_MS + 3_600_000;

let gateway: TestGateway;
let upstream: OpenAIMock;
let anthropicBilling: MockServer;
const openaiBill: BillingState = { adminKey: "sk-admin-openai-0123456789", days: new Map() };
const anthropicBill: BillingState = { adminKey: "sk-ant-admin01-0123456789", days: new Map() };

beforeAll(async () => {
  upstream = await startOpenAIMock({ reply: "Reconciled.", guard: billingAnswer(openaiBill) });
  const anthropicAnswer = billingAnswer(anthropicBill);
  anthropicBilling = await startMockServer((request, res) => {
    const answer = anthropicAnswer(request);
    if (answer) sendJson(res, answer.status, answer.body);
    else sendJson(res, 404, { type: "error", error: { type: "not_found_error", message: "no route" } });
  });
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
  await anthropicBilling?.close();
});

const admin = (method: string, path: string, body?: unknown) => call(gateway, gateway.adminKey, method, path, body);

describe("reconciliation", () => {
  it("is a scheduled task", () => {
    expect(SCHEDULED_TASKS.map((task) => task.name)).toContain("reconciliation");
  });

  it("compares a saved provider's ledger with OpenAI's bill per day and flags the drift", async () => {
    const workspace = await seedWorkspace(gateway, "Reconciled");
    const created = await admin("POST", "/v1/integrations", {
      name: "OpenAI with billing",
      slug: "openai-billed",
      ai_provider_id: "openai",
      key: "sk-upstream-key",
      workspace_id: workspace.id,
      configurations: {
        custom_host: `${upstream.url}/v1`,
        admin_api_key: openaiBill.adminKey,
        reconciliation_drift_percent: 10,
      },
    });
    expect(created.status).toBe(201);
    const integrationId = created.body.id;
    // The admin key is sealed like the provider key: shown masked, never in the clear.
    const shown = await admin("GET", `/v1/integrations/${integrationId}`);
    expect(JSON.stringify(shown.body)).not.toContain(openaiBill.adminKey);

    const key = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "reconciled key",
      workspace_id: workspace.id,
      scopes: ["analytics.view", "logs.list"],
    });
    const openai = new OpenAI({
      apiKey: "unused",
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { "x-gateway-api-key": key.key, "x-gateway-provider": "@openai-billed" },
    });
    let ledger = 0;
    for (let i = 0; i < 3; i++) {
      const { response } = await openai.chat.completions
        .create({ model: "gpt-5.1", messages: [{ role: "user", content: `Hello ${i}` }] })
        .withResponse();
      ledger += Number(response.headers.get("x-gateway-cost"));
    }
    // The inference calls never carried the admin key.
    for (const request of upstream.requests.filter((r) => r.path.includes("chat/completions")))
      expect(JSON.stringify(request.headers)).not.toContain(openaiBill.adminKey);
    await expect
      .poll(async () => (await call(gateway, key.key, "GET", "/v1/logs?limit=10")).body.data.length)
      .toBeGreaterThanOrEqual(3);

    // OpenAI billed 30% more today; yesterday it billed what the gateway never saw (another client).
    const yesterday = new Date(Date.parse(today) - DAY_MS).toISOString().slice(0, 10);
    openaiBill.days.set(today, ledger * 1.3);
    openaiBill.days.set(yesterday, 2);
    const services = gateway.gateway.services;
    await reconcileAll(services, new AbortController().signal, tomorrow);
    const costCalls = upstream.requests.filter((r) => r.path.includes("/organization/costs"));
    expect(costCalls.length).toBeGreaterThan(0);
    expect(costCalls[0]!.headers.authorization).toBe(`Bearer ${openaiBill.adminKey}`);

    const view = await call(gateway, key.key, "GET", `/v1/analytics/reconciliation/${integrationId}`);
    expect(view.status).toBe(200);
    const days = new Map(view.body.days.map((day: any) => [day.day, day]));
    const todays: any = days.get(today);
    expect(todays.ledger_usd).toBeCloseTo(ledger, 8);
    expect(todays.bill_usd).toBeCloseTo(ledger * 1.3, 9);
    expect(todays.drift_percent).toBeCloseTo(((ledger - ledger * 1.3) / (ledger * 1.3)) * 100, 6);
    expect(todays.flagged).toBe(true);
    expect(days.get(yesterday)).toMatchObject({ ledger_usd: 0, bill_usd: 2, flagged: true });
    expect(view.body.days).toHaveLength(7);

    // A second run within the hour is throttled: no new calls to the cost report.
    await reconcileAll(services, new AbortController().signal, tomorrow + 60_000);
    expect(upstream.requests.filter((r) => r.path.includes("/organization/costs")).length).toBe(costCalls.length);

    // Within the threshold: not flagged.
    openaiBill.days.set(today, ledger * 1.05);
    await reconcileAll(services, new AbortController().signal, tomorrow + 2 * 3_600_000);
    const again = await admin("GET", `/v1/analytics/reconciliation?from=${yesterday}&to=${today}`);
    const entry = again.body.data.find((item: any) => item.integration_id === integrationId);
    expect(entry.days.find((day: any) => day.day === today).flagged).toBe(false);

    // Another workspace sees nothing of it.
    const other = await seedWorkspace(gateway, "Elsewhere");
    const otherKey = await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "other key",
      workspace_id: other.id,
      scopes: ["analytics.view"],
    });
    expect((await call(gateway, otherKey.key, "GET", `/v1/analytics/reconciliation/${integrationId}`)).status).toBe(
      404,
    );
    const listed = await call(gateway, otherKey.key, "GET", "/v1/analytics/reconciliation");
    expect(listed.body.data).toEqual([]);
  });

  it("reads Anthropic's cost report (cents as decimal strings, paged) per day", async () => {
    const days = Array.from({ length: 10 }, (_, index) =>
      new Date(Date.parse(today) - (10 - index) * DAY_MS).toISOString().slice(0, 10),
    );
    for (const [index, day] of days.entries()) anthropicBill.days.set(day, index + 0.5);
    const bill = await readBill({
      provider: "anthropic",
      adminKey: anthropicBill.adminKey,
      customHost: anthropicBilling.url,
      from: days[0]!,
      to: today,
      trusted: gateway.gateway.services.trustedHosts,
      signal: new AbortController().signal,
    });
    expect([...bill.keys()]).toEqual(days);
    for (const [index, day] of days.entries()) expect(bill.get(day)).toBeCloseTo(index + 0.5, 9);
    await expect(
      readBill({
        provider: "anthropic",
        adminKey: "wrong",
        customHost: anthropicBilling.url,
        from: days[0]!,
        to: today,
        trusted: gateway.gateway.services.trustedHosts,
        signal: new AbortController().signal,
      }),
    ).rejects.toThrow(/401/);
  });
});
