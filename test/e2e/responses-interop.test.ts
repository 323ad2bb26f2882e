import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { assertOpenAISchema, sseData } from "../helpers/openai-schema.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * Issue 40's Responses items, over HTTP and over the Responses WebSocket mode: native answers forwarded as the
 * provider sent them (4), translated Responses with every field OpenAI's schema requires, streamed and with the
 * beta header (5), item references resolved from the caller's own workspace only (3), and the WebSocket's
 * turns, lanes, errors, connection-local chains and workspace boundaries.
 */

let gateway: TestGateway;
let openaiMock: OpenAIMock;
let anthropicMock: AnthropicMock;
let keyA: string;
let keyB: string;

beforeAll(async () => {
  [gateway, openaiMock, anthropicMock] = await Promise.all([
    startTestGateway(),
    startOpenAIMock(),
    startAnthropicMock({ scenario: "text" }),
  ]);
  const [wsA, wsB] = [await seedWorkspace(gateway, "interop-a"), await seedWorkspace(gateway, "interop-b")];
  const key = async (name: string, workspace: string) =>
    (
      await createKey(gateway, gateway.adminKey, "workspace", "service", {
        name,
        workspace_id: workspace,
        scopes: ["*"],
      })
    ).key as string;
  [keyA, keyB] = [await key("a", wsA.id), await key("b", wsB.id)];
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all([openaiMock?.close(), anthropicMock?.close()]);
});

const routing = (provider: "openai" | "anthropic") => ({
  "x-gateway-provider": provider,
  "x-gateway-custom-host": provider === "openai" ? `${openaiMock.url}/v1` : anthropicMock.url,
  authorization: "Bearer sk-provider",
});

async function create(
  body: Record<string, unknown>,
  provider: "openai" | "anthropic",
  key = keyA,
  extra: Record<string, string> = {},
) {
  const response = await fetch(`${gateway.url}/v1/responses`, {
    method: "POST",
    headers: { "x-gateway-api-key": key, "content-type": "application/json", ...routing(provider), ...extra },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

const weatherTool = {
  type: "function",
  name: "lookup",
  description: "Looks a city up",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

describe("native answers (OpenAI)", () => {
  it("are forwarded as the provider sent them, every field and its order kept, JSON and streamed", async () => {
    const answer = await create({ model: "gpt-4o-mini", input: "Hi", prompt_cache_key: "k1" }, "openai");
    expect(answer.status).toBe(200);
    const json = JSON.parse(answer.text);
    // The mock answers OpenAI's current object; none of it is re-shaped or dropped (billing is not even in the
    // published schema).
    expect(Object.keys(json)).toEqual(expect.arrayContaining(["billing", "completed_at", "presence_penalty"]));
    expect(json).toMatchObject({
      background: false,
      store: true,
      service_tier: "default",
      top_logprobs: 0,
      max_tool_calls: null,
      prompt_cache_key: "k1",
      safety_identifier: null,
      frequency_penalty: 0,
      text: { verbosity: "medium" },
      usage: { input_tokens_details: { cache_write_tokens: 0 } },
    });
    expect(Object.keys(json).indexOf("billing")).toBe(Object.keys(json).indexOf("background") + 1);

    const streamed = await create({ model: "gpt-4o-mini", input: "Hi", stream: true }, "openai");
    const completed = sseData(streamed.text)
      .map((data) => JSON.parse(data))
      .find((event) => event.type === "response.completed");
    expect(completed.response).toMatchObject({ billing: { payer: "developer" }, completed_at: expect.any(Number) });
  });
});

describe("translated answers (Anthropic)", () => {
  it.each([
    ["default schema", {}],
    ["beta schema", { "x-gateway-beta": "use-responses-api-2026-07-30" }],
  ])("carry every field OpenAI's Response requires, JSON and in every streamed event (%s)", async (_name, beta) => {
    const body = { model: "claude-3-5-sonnet-20241022", input: "Hi", tools: [weatherTool], tool_choice: "none" };
    const answer = await create(body, "anthropic", keyA, beta);
    const json = JSON.parse(answer.text);
    assertOpenAISchema("Response", json);
    expect(json).toMatchObject({
      completed_at: expect.any(Number),
      presence_penalty: 0,
      frequency_penalty: 0,
      top_logprobs: 0,
      max_tool_calls: null,
      store: true,
      background: false,
      service_tier: expect.any(String),
      safety_identifier: null,
      prompt_cache_key: null,
      tools: [{ ...weatherTool, strict: null }],
      usage: { input_tokens_details: { cache_write_tokens: expect.any(Number) } },
    });
    const streamed = await create({ ...body, stream: true }, "anthropic", keyA, beta);
    const events = sseData(streamed.text).map((data) => JSON.parse(data));
    for (const event of events) assertOpenAISchema("ResponseStreamEvent", event);
    const lifecycle = events.filter((event) => event.response);
    expect(lifecycle.map((event) => event.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.completed",
    ]);
    expect(lifecycle[0].response).toMatchObject({ completed_at: null, presence_penalty: 0, tools: [{ strict: null }] });
  });
});

describe("item references", () => {
  it("resolve from the caller's own workspace on a translated provider, and from no other", async () => {
    const first = JSON.parse((await create({ model: "claude-3-5-sonnet-20241022", input: "Hi" }, "anthropic")).text);
    const item = first.output.find((output: any) => output.type === "message");
    const input = [
      { role: "user", content: "Hi" },
      { type: "item_reference", id: item.id },
      { role: "user", content: "And then?" },
    ];
    const mine = await create({ model: "claude-3-5-sonnet-20241022", input }, "anthropic");
    expect(mine.status).toBe(200);
    const sent = JSON.parse(anthropicMock.requests.at(-1)!.body.toString());
    expect(sent.messages.map((message: any) => message.role)).toEqual(["user", "assistant", "user"]);
    expect(JSON.stringify(sent.messages[1])).toContain(item.content[0].text);

    // Another workspace names the same item: as unknown to it as a made-up id. A translated provider cannot take
    // an item reference back (docs/routing.md, agent history across providers), so it is dropped and said so;
    // the item's content never reaches the upstream.
    const theirs = await create({ model: "claude-3-5-sonnet-20241022", input }, "anthropic", keyB);
    expect(theirs.status).toBe(200);
    expect(theirs.headers.get("x-gateway-dropped-history")).toBe("item_reference=1");
    const sentForThem = anthropicMock.requests.at(-1)!.body.toString();
    expect(sentForThem).not.toContain(item.content[0].text);
    expect(JSON.parse(sentForThem).messages.map((message: any) => message.role)).toEqual(["user"]);
  });
});

/** A raw Responses WebSocket to the gateway: frames received, and a way to wait for some. */
async function openSocket(headers: Record<string, string>) {
  const socket = new WebSocket(`${gateway.url.replace("http", "ws")}/v1/responses`, { headers });
  const frames: any[] = [];
  socket.on("message", (data) => frames.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve());
    socket.once("unexpected-response", (_request, response) => reject(new Error(`status ${response.statusCode}`)));
    socket.once("error", reject);
  });
  const until = async (count: (frames: any[]) => boolean) => {
    await expect.poll(() => count(frames), { timeout: 10_000 }).toBe(true);
  };
  return { socket, frames, until };
}

describe("the Responses WebSocket mode", () => {
  it("refuses an upgrade without a valid key with an HTTP 401 in OpenAI's shape", async () => {
    await expect(openSocket({ ...routing("anthropic") })).rejects.toThrow("status 401");
    await expect(openSocket({ ...routing("anthropic"), "x-gateway-api-key": "gk-wrong" })).rejects.toThrow(
      "status 401",
    );
  });

  it("runs turns per lane, answers bad events with error frames, continues store:false responses on the socket", async () => {
    const { socket, frames, until } = await openSocket({ "x-gateway-api-key": keyA, ...routing("anthropic") });
    const model = "claude-3-5-sonnet-20241022";
    const completed = () => frames.filter((frame) => frame.type === "response.completed");

    socket.send(JSON.stringify({ type: "session.update" }));
    socket.send("not json");
    socket.send(JSON.stringify({ type: "response.create", model, input: "x", background: true }));
    await until((all) => all.filter((frame) => frame.type === "error").length === 3);
    const errors = frames.filter((frame) => frame.type === "error");
    expect(errors.map((frame) => frame.error.code).sort()).toEqual([
      "invalid_event",
      "unknown_event_type",
      "unsupported_parameter",
    ]);
    expect(errors.every((frame) => frame.status === 400)).toBe(true);

    // Two lanes: each event echoes its lane.
    socket.send(JSON.stringify({ type: "response.create", model, input: "lane a", store: false, stream_id: "a" }));
    socket.send(JSON.stringify({ type: "response.create", model, input: "lane b", stream_id: "b" }));
    await until(() => completed().length === 2);
    for (const lane of ["a", "b"]) {
      const events = frames.filter((frame) => frame.stream_id === lane);
      expect(events[0].type).toBe("response.created");
      expect(events.at(-1).type).toBe("response.completed");
    }
    // The unstored response of lane a is continued on this socket; the stored one of lane b through the store.
    const unstored = completed().find((frame) => frame.stream_id === "a").response.id;
    socket.send(JSON.stringify({ type: "response.create", model, input: "more", previous_response_id: unstored }));
    await until(() => completed().length === 3);
    expect(completed()[2].response.previous_response_id).toBe(unstored);
    expect(anthropicMock.requests.at(-1)!.body.toString()).toContain("lane a");
    socket.close();

    // Over HTTP (or on another socket) the unstored response is unknown.
    const elsewhere = await create({ model, input: "more", previous_response_id: unstored }, "anthropic");
    expect(elsewhere.status).toBe(404);
  });

  it("keeps a workspace's stored responses from another workspace's socket, and logs every turn", async () => {
    const mine = JSON.parse((await create({ model: "claude-3-5-sonnet-20241022", input: "secret" }, "anthropic")).text);
    const { socket, frames, until } = await openSocket({ "x-gateway-api-key": keyB, ...routing("anthropic") });
    socket.send(
      JSON.stringify({
        type: "response.create",
        model: "claude-3-5-sonnet-20241022",
        input: "go on",
        previous_response_id: mine.id,
      }),
    );
    await until((all) => all.some((frame) => frame.type === "error"));
    expect(frames[0]).toMatchObject({ type: "error", status: 404, error: { code: "previous_response_not_found" } });
    socket.close();

    // The refused turn is a request of its own in the request log, as over HTTP.
    const refusedTurnLogged = async () => {
      const logs = await fetch(`${gateway.url}/v1/logs?limit=50`, {
        headers: { "x-gateway-api-key": gateway.adminKey },
      });
      const entries = ((await logs.json()) as { data: any[] }).data;
      return entries.some((entry) => entry.path === "/v1/responses" && entry.status === 404);
    };
    await expect.poll(refusedTurnLogged, { timeout: 5000 }).toBe(true);
  });
});
