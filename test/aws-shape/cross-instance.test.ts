import { createHash, randomBytes, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { ensureOrganisation } from "../../core/control/organisation/bootstrap.ts";
import { mcpIntegrationStore, mcpServerStore } from "../../core/features/mcp/records.ts";
import { form, hiddenField, pageForm } from "../helpers/oauth-browser.ts";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";
import { type PacedUpstream, startPacedUpstream } from "./paced-upstream.ts";
import { TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";
import type { AwsShape } from "./shape.ts";
import { startShapeTarget } from "./target.ts";

/**
 * What only the whole AWS shape shows, each a failure the direct invocation of one bundle cannot have: requests
 * of one client landing on different Lambda instances (`x-shape-instance` says which), an SQS redelivery to a
 * second worker while the first still runs, CloudFront's read timeout and the function URL's request limit. The
 * shape here redelivers after 4 s and CloudFront gives up after 8 s without a byte, so that time shows in seconds.
 */

let shape: AwsShape;
let close: () => Promise<void>;
let paced: PacedUpstream;
let openai: OpenAIMock;
let mcp: McpUpstream;

beforeAll(async () => {
  [paced, openai, mcp] = await Promise.all([startPacedUpstream(), startOpenAIMock(), startMcpUpstream()]);
  const target = await startShapeTarget({ readTimeoutSeconds: 8, visibilityTimeoutSeconds: 4 });
  shape = target.shape;
  close = target.close;
}, 600_000);

afterAll(async () => {
  await close?.();
  await Promise.all([paced?.close(), openai?.close(), mcp?.close()]);
});

const instanceOf = (response: Response) => response.headers.get("x-shape-instance");

function call(path: string, init: RequestInit & { key?: string; upstream?: string } = {}): Promise<Response> {
  const { key = shape.adminKey, upstream, headers, ...rest } = init;
  return fetch(`${shape.url}${path}`, {
    ...rest,
    headers: {
      "x-gateway-api-key": key,
      ...(upstream
        ? { "x-gateway-provider": "openai", "x-gateway-custom-host": `${upstream}/v1`, authorization: "Bearer k" }
        : {}),
      ...(rest.body && typeof rest.body === "string" ? { "content-type": "application/json" } : {}),
      ...(headers as Record<string, string>),
    },
  });
}

const chat = (content: string, options: { model?: string; stream?: boolean } = {}) =>
  call("/v1/chat/completions", {
    method: "POST",
    upstream: paced.url,
    body: JSON.stringify({
      model: options.model ?? "gpt-4o-mini",
      messages: [{ role: "user", content }],
      stream: options.stream,
    }),
  });

/** The id a streamed Responses answer names in its response.created event. */
function streamedResponseId(text: string): string {
  for (const line of text.split("\n")) {
    if (!line.startsWith("data: {")) continue;
    const event = JSON.parse(line.slice(6));
    if (event.type === "response.created") return event.response.id;
  }
  throw new Error(`no response.created event in ${text.slice(0, 300)}`);
}

describe("state one instance writes, another reads at once", () => {
  it("a Responses chain whose turns land on different instances: each turn chains on the one just answered", async () => {
    const turns: Array<{ id: string; instance: string | null }> = [];
    for (const [index, stream] of [false, false, true, false].entries()) {
      const response = await call("/v1/responses", {
        method: "POST",
        upstream: openai.url,
        body: JSON.stringify({
          model: "gpt-4o-mini",
          input: `turn ${index}`,
          previous_response_id: turns.at(-1)?.id,
          stream,
        }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      const id = stream ? streamedResponseId(await response.text()) : (await response.json()).id;
      turns.push({ id, instance: instanceOf(response) });
    }
    for (let index = 1; index < turns.length; index++)
      expect(turns[index]!.instance).not.toBe(turns[index - 1]!.instance);
    // The provider got the whole conversation: every earlier turn, read from the store by another instance.
    const sent = JSON.stringify(openai.lastRequest()!.json().input);
    for (const index of [0, 1, 2, 3]) expect(sent).toContain(`turn ${index}`);
    const items = await call(`/v1/responses/${turns.at(-1)!.id}/input_items`);
    expect(items.status).toBe(200);
  });

  it("a background response cancelled through another instance stops its run on the first", async () => {
    const created = await call("/v1/responses", {
      method: "POST",
      upstream: paced.url,
      body: JSON.stringify({ model: "gpt-4o-mini", input: "a long task", background: true }),
    });
    expect(created.status).toBe(200);
    const { id, status } = await created.json();
    // The default schema shows `queued` as in_progress, and a cancelled response as failed with code `cancelled`.
    expect(status).toBe("in_progress");
    await expect
      .poll(() => paced.requests.filter((r) => r.path.startsWith("/v1/responses")).length, { timeout: 10_000 })
      .toBe(1);
    // The run keeps its instance busy (the invocation lasts as long as it does): the cancel lands elsewhere.
    const cancelled = await call(`/v1/responses/${id}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(instanceOf(cancelled)).not.toBe(instanceOf(created));
    expect((await cancelled.json()).error?.code).toBe("cancelled");
    // The run reads its record every 2 s, sees the cancel and lets go of the provider's request.
    await expect.poll(() => paced.closed, { timeout: 10_000, interval: 200 }).toBe(1);
    expect((await (await call(`/v1/responses/${id}`)).json()).error?.code).toBe("cancelled");
  });

  it("a rate limit created through the policies function refuses requests on every chat instance within 3 s", async () => {
    const model = `shape-limited-${randomUUID()}`;
    // Two chat instances load the organisation's policies (none for this model) and answer.
    const warm = [await chat("before", { model }), await chat("before", { model })];
    expect(warm.map((response) => response.status)).toEqual([200, 200]);
    expect(instanceOf(warm[0]!)).not.toBe(instanceOf(warm[1]!));
    const policy = await call("/v2/policies/rate-limits", {
      method: "POST",
      body: JSON.stringify({ type: "requests", unit: "rpm", value: 0, conditions: [{ key: "model", value: model }] }),
    });
    expect(policy.status).toBe(201);
    const { id } = await policy.json();
    // The chat instances sat idle meanwhile; the documented delay is 3 s (docs/limits.md).
    await sleep(3100);
    const after = [];
    for (let index = 0; index < 4; index++) after.push(await chat("after", { model }));
    expect(after.map((response) => response.status)).toEqual([429, 429, 429, 429]);
    expect(new Set(after.map(instanceOf)).size).toBeGreaterThanOrEqual(2);
    expect([...new Set(after.map(instanceOf))]).toEqual(expect.arrayContaining(warm.map(instanceOf)));
    await call(`/v2/policies/rate-limits/${id}`, { method: "DELETE" });
  });

  it("the simple cache filled on one instance answers on another", async () => {
    const question = `cached ${randomUUID()}`;
    const config = JSON.stringify({
      provider: "openai",
      api_key: "k",
      custom_host: `${paced.url}/v1`,
      cache: { mode: "simple" },
    });
    const ask = () =>
      call("/v1/chat/completions", {
        method: "POST",
        headers: { "x-gateway-config": config },
        body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: question }] }),
      });
    const first = await ask();
    const second = await ask();
    expect([first.headers.get("x-gateway-cache-status"), second.headers.get("x-gateway-cache-status")]).toEqual([
      "MISS",
      "HIT",
    ]);
    expect(instanceOf(first)).not.toBe(instanceOf(second));
    expect(paced.messages().filter((message) => message === question)).toHaveLength(1);
  });
});

describe("queue work redelivered to a second worker", () => {
  it("a batch line still running when SQS hands it to another worker is neither run twice nor lost", async () => {
    const lines = ["wait 6000 slow line", "quick 1", "quick 2", "quick 3"].map((content, index) =>
      JSON.stringify({
        custom_id: `line-${index}`,
        method: "POST",
        url: "/v1/chat/completions",
        body: { model: "gpt-4o-mini", messages: [{ role: "user", content }] },
      }),
    );
    const upload = new FormData();
    upload.append("purpose", "batch");
    upload.append("file", new Blob([`${lines.join("\n")}\n`]), "lines.jsonl");
    const file = await (await call("/v1/files", { method: "POST", body: upload })).json();
    const created = await call("/v1/batches", {
      method: "POST",
      upstream: paced.url,
      headers: { "x-gateway-batch-mode": "gateway" },
      body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }),
    });
    expect(created.status, await created.clone().text()).toBe(200);
    const { id } = await created.json();
    await expect
      .poll(async () => (await (await call(`/v1/batches/${id}`)).json()).status, { timeout: 60_000, interval: 500 })
      .toBe("completed");
    const batch = await (await call(`/v1/batches/${id}`)).json();
    expect(batch.request_counts).toEqual({ total: 4, completed: 4, failed: 0 });
    // Every line reached the provider exactly once, and is in the output once.
    for (const content of ["wait 6000 slow line", "quick 1", "quick 2", "quick 3"])
      expect(
        paced.messages().filter((message) => message === content),
        content,
      ).toHaveLength(1);
    // SQS delivered messages again while the first worker was still on them (visibility 4 s, the slow line 6 s),
    // to another instance.
    const seen = new Map<string, Set<string | undefined>>();
    for (const delivery of shape.deliveries.filter((entry) => entry.queue === "Batches"))
      for (const messageId of delivery.messageIds)
        seen.set(messageId, (seen.get(messageId) ?? new Set()).add(delivery.instance));
    expect([...seen.values()].some((instances) => instances.size >= 2)).toBe(true);
    const output = await (await call(`/v1/files/${batch.output_file_id}/content`)).text();
    expect(
      output
        .trim()
        .split("\n")
        .map((entry) => JSON.parse(entry).custom_id)
        .sort(),
    ).toEqual(["line-0", "line-1", "line-2", "line-3"]);
  }, 90_000);
});

describe("a message no worker can take", () => {
  it("is delivered again after each failure, to whichever instance, then dead-lettered after 5 receives", async () => {
    const sqs = new SQSClient({
      endpoint: inject("emulators").fauxqs,
      region: TEST_REGION,
      credentials: TEST_CREDENTIALS,
    });
    try {
      const { MessageId } = await sqs.send(
        new SendMessageCommand({ QueueUrl: shape.queues.get("Batches")!.url, MessageBody: "not json {" }),
      );
      // The worker reports it failed (a partial batch failure) each time; SQS moves it on its sixth receive.
      let dead: string | undefined;
      for (const deadline = Date.now() + 60_000; !dead && Date.now() < deadline; ) {
        const { Messages } = await sqs.send(
          new ReceiveMessageCommand({ QueueUrl: shape.queues.get("BatchesDlq")!.url, WaitTimeSeconds: 1 }),
        );
        dead = Messages?.find((message) => message.MessageId === MessageId)?.Body;
      }
      expect(dead).toBe("not json {");
      const attempts = shape.deliveries.filter((delivery) => delivery.messageIds.includes(MessageId!));
      expect(attempts.map((delivery) => delivery.receiveCounts[delivery.messageIds.indexOf(MessageId!)])).toEqual([
        1, 2, 3, 4, 5,
      ]);
      for (const attempt of attempts) expect(attempt.failed).toContain(MessageId);
      expect(new Set(attempts.map((attempt) => attempt.instance)).size).toBeGreaterThanOrEqual(2);
    } finally {
      sqs.destroy();
    }
  }, 90_000);
});

describe("MCP OAuth across instances", () => {
  it("the pending authorization and the code written by one instance are read by the next", async () => {
    const { slug, workspaceId } = await seedServer();
    const key = await (
      await call("/v1/api-keys/workspace/service", {
        method: "POST",
        body: JSON.stringify({ name: "oauth-across", workspace_id: workspaceId, scopes: ["*"] }),
      })
    ).json();
    const redirect = "http://127.0.0.1:45680/callback";
    const client = await (
      await fetch(`${shape.url}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: "none", client_name: "across" }),
      })
    ).json();
    const verifier = randomBytes(32).toString("base64url");
    const resource = `${shape.url}/mcp/${slug}`;
    const authorize = new URL(`${shape.url}/oauth/authorize`);
    for (const [name, value] of Object.entries({
      response_type: "code",
      client_id: client.client_id,
      redirect_uri: redirect,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
      resource,
      state: "s1",
    }))
      authorize.searchParams.set(name, value);
    const page = await fetch(authorize);
    const signIn = await page.text();
    const signedIn = await fetch(
      `${shape.url}/oauth/authorize/sign-in`,
      pageForm(shape.url, {
        request_id: hiddenField(signIn, "request_id")!,
        csrf: hiddenField(signIn, "csrf")!,
        api_key: key.key,
      }),
    );
    const consent = await signedIn.text();
    const decided = await fetch(
      `${shape.url}/oauth/authorize/consent`,
      pageForm(shape.url, {
        request_id: hiddenField(consent, "request_id")!,
        csrf: hiddenField(consent, "csrf")!,
        decision: "approve",
      }),
    );
    expect(decided.status).toBe(302);
    const code = new URL(decided.headers.get("location")!).searchParams.get("code")!;
    const exchange = (body: Record<string, string>) => fetch(`${shape.url}/oauth/token`, form(body));
    const grant = {
      grant_type: "authorization_code",
      code,
      redirect_uri: redirect,
      client_id: client.client_id,
      code_verifier: verifier,
    };
    const token = await exchange(grant);
    expect(token.status).toBe(200);
    const steps = [page, signedIn, decided, token].map(instanceOf);
    for (let index = 1; index < steps.length; index++) expect(steps[index]).not.toBe(steps[index - 1]);
    const { access_token } = await token.json();
    const tools = await fetch(resource, {
      method: "POST",
      headers: {
        authorization: `Bearer ${access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2025-06-18",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(tools.status).toBe(200);
    expect(await tools.text()).toContain("echo");
    // The code was used once: a replay, on whichever instance, is refused.
    const replay = await exchange(grant);
    expect(replay.status).toBe(400);
    expect((await replay.json()).error).toBe("invalid_grant");
  });
});

async function seedServer(): Promise<{ slug: string; workspaceId: string }> {
  const { records } = shape.stores();
  const { organisationId, defaultWorkspaceId } = await ensureOrganisation(records);
  const integration = await mcpIntegrationStore(records).create(organisationId, {
    slug: "across-upstream",
    name: "Across",
    url: mcp.url,
    transport: "http",
    auth_type: "none",
    configurations: {},
    capabilities: [{ type: "tool", name: "echo", enabled: true }],
    server_info: {},
    workspaces: [],
    global_workspace_access: true,
  });
  const server = await mcpServerStore(records).create(organisationId, {
    slug: "across",
    workspaceId: defaultWorkspaceId,
    name: "Across",
    mcp_integration_id: integration.id,
    capability_overrides: {},
    default_user_access: "allow",
    user_access: [],
  });
  return { slug: server.slug, workspaceId: defaultWorkspaceId };
}

describe("the edges: CloudFront and the function URL", () => {
  it("CloudFront cuts a JSON answer slower than its read timeout (504); a stream sending bytes meanwhile lives", async () => {
    const slow = await chat("wait 10000 then answer");
    expect(slow.status).toBe(504);
    expect(slow.headers.get("x-cache")).toBe("Error from cloudfront");
    expect(await slow.text()).toContain("could not be satisfied");
    const started = Date.now();
    const stream = await chat("drip 6 2000", { stream: true });
    expect(stream.status).toBe(200);
    const text = await stream.text();
    expect(Date.now() - started).toBeGreaterThan(8000);
    expect(text.match(/chat\.completion\.chunk/g)?.length).toBeGreaterThanOrEqual(6);
  }, 40_000);

  it("the function URL refuses a request over 6 MB (a binary body counts base64-encoded) before any instance", async () => {
    const upload = await (
      await call("/v1/uploads", {
        method: "POST",
        body: JSON.stringify({
          filename: "big.jsonl",
          purpose: "batch",
          bytes: 9 * 1024 * 1024,
          mime_type: "application/jsonl",
        }),
      })
    ).json();
    const part = (megabytes: number) => {
      const body = new FormData();
      body.append("data", new Blob([Buffer.alloc(megabytes * 1024 * 1024, 0x61)]), "part");
      return call(`/v1/uploads/${upload.id}/parts`, { method: "POST", body });
    };
    const tooLarge = await part(5);
    expect(tooLarge.status).toBe(413);
    expect(instanceOf(tooLarge)).toBeNull();
    expect((await tooLarge.json()).Message).toMatch(/smaller than 6291456 bytes/);
    const fits = await part(4);
    expect(fits.status, await fits.clone().text()).toBe(200);
  });

  it("a viewer's own x-forwarded-host is replaced: the OAuth issuer stays the Router's", async () => {
    const metadata = await (
      await fetch(`${shape.url}/.well-known/oauth-authorization-server`, {
        headers: { "x-forwarded-host": "evil.example" },
      })
    ).json();
    expect(metadata.issuer).toBe(shape.url);
  });
});
