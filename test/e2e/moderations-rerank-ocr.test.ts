import { readFileSync } from "node:fs";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPENAI_MODERATION_CATEGORIES } from "../../core/providers/types.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";
import { validatingFetch } from "../helpers/openai-schema.ts";

/**
 * Moderations (openai SDK), rerank and OCR (fetch) through the local gateway against mock upstreams of each
 * provider, over real HTTP. Every mock answers what the provider's API reference documents (the fixtures name
 * their pages: test/fixtures/{mistral,cohere,bedrock,voyage,jina}/); one server serves them all under a prefix
 * per provider.
 */

const fixture = (dir: string, name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/${dir}/${name}`, import.meta.url), "utf8"));

/** OpenAI's moderation object (https://platform.openai.com/docs/api-reference/moderations/object), omni model. */
function openaiModeration(model: string) {
  const categories = [...OPENAI_MODERATION_CATEGORIES];
  return {
    id: "modr-970d409ef3bef3b70c73d8232df86e7d",
    model,
    results: [
      {
        flagged: true,
        categories: Object.fromEntries(categories.map((name) => [name, name === "violence"])),
        category_scores: Object.fromEntries(categories.map((name) => [name, name === "violence" ? 0.86 : 0.0001])),
        category_applied_input_types: Object.fromEntries(categories.map((name) => [name, ["text"]])),
      },
    ],
  };
}

let gateway: TestGateway;
let upstream: MockServer;
let keyA: string;
let keyB: string;
let openai: OpenAI;
let mistral: OpenAI;
/** OCR answers of the flaky Mistral host: failures before a success (retries). */
let flakyFailures = 0;

const requestsTo = (prefix: string): RecordedRequest[] =>
  upstream.requests.filter((request) => request.path.startsWith(prefix));

beforeAll(async () => {
  upstream = await startMockServer((request, response) => {
    const { path } = request;
    if (path === "/openai/v1/moderations") return sendJson(response, 200, openaiModeration(request.json().model));
    if (path === "/mistral/v1/moderations")
      return sendJson(response, 200, fixture("mistral", "moderation-response.json"));
    if (path === "/mistral/v1/ocr") return sendJson(response, 200, fixture("mistral", "ocr-response.json"));
    if (path === "/mistral-down/v1/ocr") return sendJson(response, 503, { message: "Service unavailable" });
    if (path === "/mistral-flaky/v1/ocr") {
      if (flakyFailures-- > 0) return sendJson(response, 503, { message: "Service unavailable" });
      return sendJson(response, 200, fixture("mistral", "ocr-response.json"));
    }
    if (path === "/cohere/v1/rerank") return sendJson(response, 200, fixture("cohere", "rerank-v1-response.json"));
    if (path === "/voyage/v1/rerank") return sendJson(response, 200, fixture("voyage", "rerank-response.json"));
    if (path === "/jina/v1/rerank") return sendJson(response, 200, fixture("jina", "rerank-response.json"));
    if (path === "/bedrock/rerank") return sendJson(response, 200, fixture("bedrock", "rerank-response.json"));
    sendJson(response, 404, { error: { message: `no mock for ${path}` } });
  });
  gateway = await startTestGateway();
  const wsA = await seedWorkspace(gateway, "Moderation A");
  const wsB = await seedWorkspace(gateway, "Moderation B");
  keyA = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "a",
      workspace_id: wsA.id,
      scopes: ["*"],
    })
  ).key;
  keyB = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "b",
      workspace_id: wsB.id,
      scopes: ["*"],
    })
  ).key;
  const client = (provider: string, host: string) =>
    new OpenAI({
      // Every OpenAI-shaped answer is checked against OpenAI's published OpenAPI document.
      fetch: validatingFetch(),
      apiKey: `sk-${provider}-secret`,
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: {
        "x-gateway-api-key": keyA,
        "x-gateway-provider": provider,
        "x-gateway-custom-host": `${upstream.url}${host}`,
      },
      maxRetries: 0,
    });
  openai = client("openai", "/openai/v1");
  mistral = client("mistral-ai", "/mistral/v1");
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

/** The request log of a trace (polled: logs are written after the answer), read with `key`. */
async function logOf(trace: string, key = keyA): Promise<any> {
  const read = async () => {
    const list = await call(gateway, key, "GET", `/v1/logs?trace_id=${trace}`);
    const id = list.body?.data?.[0]?.id;
    return id ? (await call(gateway, key, "GET", `/v1/logs/${id}`)).body : undefined;
  };
  await expect.poll(read, { timeout: 5000 }).toBeDefined();
  return read();
}

const post = (path: string, body: unknown, headers: Record<string, string>) =>
  fetch(`${gateway.url}${path}`, {
    method: "POST",
    headers: { "x-gateway-api-key": keyA, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });

describe("moderations", () => {
  it("OpenAI: passes through, sends the default text-moderation-latest, logs a free priced request", async () => {
    const trace = "trace-moderation-openai";
    const result = await openai.moderations.create(
      { input: "I will hurt you" },
      { headers: { "x-gateway-trace-id": trace } },
    );
    const sent = requestsTo("/openai/").at(-1)!;
    expect(sent.json()).toEqual({ model: "text-moderation-latest", input: "I will hurt you" });
    expect(sent.headers.authorization).toBe("Bearer sk-openai-secret");
    expect(result.model).toBe("text-moderation-latest");
    for (const name of OPENAI_MODERATION_CATEGORIES) {
      expect(typeof result.results[0]!.categories[name as keyof (typeof result.results)[0]["categories"]]).toBe(
        "boolean",
      );
    }
    const log = await logOf(trace);
    expect(log).toMatchObject({ route: "/v1/moderations", provider: "openai", status: 200, cost: 0 });
    expect(log.usage).toMatchObject({ estimated: true });
    expect(JSON.stringify(log)).not.toContain("sk-openai-secret");
  });

  it("Mistral: maps Mistral's categories onto OpenAI's 13, keeps Mistral's own, prices the tokens", async () => {
    const trace = "trace-moderation-mistral";
    const result = await mistral.moderations.create(
      { input: ["I will hurt you", "and rob the bank"] },
      { headers: { "x-gateway-trace-id": trace } },
    );
    const sent = requestsTo("/mistral/v1/moderations").at(-1)!;
    expect(sent.json()).toEqual({ model: "mistral-moderation-latest", input: ["I will hurt you", "and rob the bank"] });
    const [first] = result.results;
    expect(Object.keys(first!.categories).sort()).toEqual([...OPENAI_MODERATION_CATEGORIES].sort());
    expect(Object.keys(first!.category_scores).sort()).toEqual([...OPENAI_MODERATION_CATEGORIES].sort());
    expect(first!.categories.violence).toBe(true);
    expect(first!.flagged).toBe(true);
    expect((first as any).mistral.categories.dangerous_and_criminal_content).toBe(true);
    const log = await logOf(trace);
    expect(log).toMatchObject({
      route: "/v1/moderations",
      provider: "mistral-ai",
      answeredModel: "mistral-moderation-2411",
    });
    expect(log.usage.totalTokens).toBeGreaterThan(0);
    expect(log.cost).toBeGreaterThan(0);
  });

  it("answers 400 naming `input` when it is missing", async () => {
    const error = await openai.moderations.create({} as never).catch((caught) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ param: "input", type: "invalid_request_error" });
  });
});

describe("rerank", () => {
  const body = {
    model: "rerank-v3.5",
    query: "What is the capital of the United States?",
    documents: ["Carson City is the capital city of Nevada.", "Washington, D.C. is the capital of the United States."],
    top_n: 2,
    return_documents: true,
  };

  it("Cohere: the answer as received; search units and cost logged", async () => {
    const trace = "trace-rerank-cohere";
    const response = await post("/v1/rerank", body, {
      "x-gateway-provider": "cohere",
      authorization: "Bearer co-secret",
      "x-gateway-custom-host": `${upstream.url}/cohere`,
      "x-gateway-trace-id": trace,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(fixture("cohere", "rerank-v1-response.json"));
    expect(requestsTo("/cohere/").at(-1)!.json()).toEqual(body);
    const log = await logOf(trace);
    expect(log).toMatchObject({ route: "/v1/rerank", provider: "cohere", units: { searches: 1 } });
    expect(log.cost).toBeCloseTo(0.002, 10);
  });

  it("Voyage: top_k on the wire, tokens and cost logged", async () => {
    const trace = "trace-rerank-voyage";
    const response = await post(
      "/v1/rerank",
      { ...body, model: "rerank-2.5" },
      {
        "x-gateway-provider": "voyage",
        authorization: "Bearer pa-secret",
        "x-gateway-custom-host": `${upstream.url}/voyage/v1`,
        "x-gateway-trace-id": trace,
      },
    );
    expect(await response.json()).toEqual(fixture("voyage", "rerank-response.json"));
    expect(requestsTo("/voyage/").at(-1)!.json()).toMatchObject({ top_k: 2, return_documents: true });
    expect(requestsTo("/voyage/").at(-1)!.json().top_n).toBeUndefined();
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "voyage", usage: { totalTokens: 42, estimated: false } });
    expect(log.cost).toBeCloseTo((42 * 0.05) / 1_000_000, 12);
  });

  it("Jina: the answer as received, tokens logged", async () => {
    const trace = "trace-rerank-jina";
    const response = await post(
      "/v1/rerank",
      { ...body, model: "jina-reranker-v2-base-multilingual" },
      {
        "x-gateway-provider": "jina",
        authorization: "Bearer jina-secret",
        "x-gateway-custom-host": `${upstream.url}/jina/v1`,
        "x-gateway-trace-id": trace,
      },
    );
    expect(await response.json()).toEqual(fixture("jina", "rerank-response.json"));
    expect(await logOf(trace)).toMatchObject({ provider: "jina", usage: { totalTokens: 38 } });
  });

  it("Bedrock: Rerank's body, SigV4-signed; queries and cost logged; no AWS secret in the log", async () => {
    const trace = "trace-rerank-bedrock";
    const arn = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0";
    const headers = {
      "x-gateway-provider": "bedrock",
      "x-gateway-aws-access-key-id": "AKIDEXAMPLE",
      "x-gateway-aws-secret-access-key": "bedrock-rerank-secret",
      "x-gateway-aws-region": "us-west-2",
      "x-gateway-custom-host": `${upstream.url}/bedrock`,
      "x-gateway-trace-id": trace,
    };
    const response = await post("/v1/rerank", { ...body, model: arn }, headers);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(fixture("bedrock", "rerank-response.json"));
    const sent = requestsTo("/bedrock/").at(-1)!;
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/us-west-2\/bedrock\//);
    expect(sent.json()).toMatchObject({
      queries: [{ type: "TEXT", textQuery: { text: body.query } }],
      rerankingConfiguration: {
        bedrockRerankingConfiguration: { numberOfResults: 2, modelConfiguration: { modelArn: arn } },
      },
    });
    const log = await logOf(trace);
    expect(log).toMatchObject({ provider: "bedrock", units: { searches: 1 } });
    expect(log.cost).toBeCloseTo(0.001, 10);
    expect(JSON.stringify(log)).not.toContain("bedrock-rerank-secret");

    const notArn = await post("/v1/rerank", { ...body, model: "amazon.rerank-v1:0" }, headers);
    expect(notArn.status).toBe(400);
    expect((await notArn.json()).error).toMatchObject({ param: "model" });
  });

  it("answers 400 naming the param for empty documents and a missing query", async () => {
    const headers = { "x-gateway-provider": "cohere", authorization: "Bearer co-secret" };
    const empty = await post("/v1/rerank", { ...body, documents: [] }, headers);
    expect(empty.status).toBe(400);
    expect((await empty.json()).error).toMatchObject({ param: "documents", type: "invalid_request_error" });
    const { query: _query, ...noQuery } = body;
    const missing = await post("/v1/rerank", noQuery, headers);
    expect(missing.status).toBe(400);
    expect((await missing.json()).error).toMatchObject({ param: "query" });
  });
});

describe("OCR", () => {
  const body = {
    model: "mistral-ocr-latest",
    document: { type: "document_url", document_url: "https://example.com/invoice.pdf" },
  };
  const mistralAt = (path: string, extra: Record<string, unknown> = {}) => ({
    provider: "mistral-ai",
    api_key: "mistral-secret",
    custom_host: `${upstream.url}${path}`,
    ...extra,
  });

  it("Mistral: passes through; pages and cost logged", async () => {
    const trace = "trace-ocr-mistral";
    const response = await post("/v1/ocr", body, {
      "x-gateway-provider": "mistral-ai",
      authorization: "Bearer mistral-secret",
      "x-gateway-custom-host": `${upstream.url}/mistral/v1`,
      "x-gateway-trace-id": trace,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual(fixture("mistral", "ocr-response.json"));
    expect(requestsTo("/mistral/v1/ocr").at(-1)!.json()).toEqual(body);
    const log = await logOf(trace);
    expect(log).toMatchObject({ route: "/v1/ocr", provider: "mistral-ai", units: { pages: 2 } });
    expect(log.cost).toBeCloseTo(0.002, 10);
    expect(JSON.stringify(log)).not.toContain("mistral-secret");
  });

  it("caches: the second identical call is a HIT without an upstream call", async () => {
    const headers = {
      "x-gateway-config": JSON.stringify(mistralAt("/mistral/v1", { cache: { mode: "simple" } })),
    };
    const cached = { ...body, pages: [0, 1] };
    const first = await post("/v1/ocr", cached, headers);
    expect(first.headers.get("x-gateway-cache-status")).toBe("MISS");
    await first.json();
    const calls = requestsTo("/mistral/v1/ocr").length;
    await expect
      .poll(async () => {
        const again = await post("/v1/ocr", cached, headers);
        await again.json();
        return again.headers.get("x-gateway-cache-status");
      })
      .toBe("HIT");
    expect(requestsTo("/mistral/v1/ocr").length).toBe(calls);
  });

  it("falls back to the next target, retries a flaky one, and load-balances", async () => {
    const fallback = await post("/v1/ocr", body, {
      "x-gateway-config": JSON.stringify({
        strategy: { mode: "fallback" },
        targets: [mistralAt("/mistral-down/v1"), mistralAt("/mistral/v1")],
      }),
    });
    expect(fallback.status).toBe(200);
    expect(fallback.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
    expect((await fallback.json()).usage_info.pages_processed).toBe(2);

    flakyFailures = 2;
    const before = requestsTo("/mistral-flaky/").length;
    const retried = await post("/v1/ocr", body, {
      "x-gateway-config": JSON.stringify(
        mistralAt("/mistral-flaky/v1", { retry: { attempts: 3, on_status_codes: [503] } }),
      ),
    });
    expect(retried.status).toBe(200);
    expect(requestsTo("/mistral-flaky/").length - before).toBe(3);
    await retried.json();

    const balanced = await post("/v1/ocr", body, {
      "x-gateway-config": JSON.stringify({
        strategy: { mode: "loadbalance" },
        targets: [mistralAt("/mistral-down/v1", { weight: 0 }), mistralAt("/mistral/v1", { weight: 1 })],
      }),
    });
    expect(balanced.status).toBe(200);
    expect(balanced.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
    await balanced.json();
  });

  it("reads a gateway file id as a data URL of the workspace's own file; another workspace's is refused", async () => {
    const files = new OpenAI({
      apiKey: "unused",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": keyA },
    });
    const pdf = Buffer.from("%PDF-1.4 tiny test document");
    const file = await files.files.create({ file: await toFile(pdf, "invoice.pdf"), purpose: "user_data" });
    const trace = "trace-ocr-file";
    const headers = {
      "x-gateway-provider": "mistral-ai",
      authorization: "Bearer mistral-secret",
      "x-gateway-custom-host": `${upstream.url}/mistral/v1`,
    };
    const response = await post(
      "/v1/ocr",
      { model: "mistral-ocr-latest", document: { type: "file", file_id: file.id } },
      { ...headers, "x-gateway-trace-id": trace },
    );
    expect(response.status).toBe(200);
    await response.json();
    expect(requestsTo("/mistral/v1/ocr").at(-1)!.json().document).toEqual({
      type: "document_url",
      document_url: `data:application/pdf;base64,${pdf.toString("base64")}`,
      document_name: "invoice.pdf",
    });
    // The log keeps the client's request (the file id), not the file's bytes.
    expect((await logOf(trace)).requestBody).toMatchObject({ document: { type: "file", file_id: file.id } });

    const other = await fetch(`${gateway.url}/v1/ocr`, {
      method: "POST",
      headers: { ...headers, "x-gateway-api-key": keyB, "content-type": "application/json" },
      body: JSON.stringify({ model: "mistral-ocr-latest", document: { type: "file", file_id: file.id } }),
    });
    expect(other.status).toBe(400);
    expect((await other.json()).error).toMatchObject({ param: "document.file_id", code: "file_not_found" });
  });

  it("answers 400 naming the param for a bad document.type", async () => {
    const response = await post(
      "/v1/ocr",
      { model: "mistral-ocr-latest", document: { type: "pdf", url: "https://example.com/x.pdf" } },
      { "x-gateway-provider": "mistral-ai", authorization: "Bearer mistral-secret" },
    );
    expect(response.status).toBe(400);
    expect((await response.json()).error.param).toMatch(/^document/);
  });
});

describe("logs of these routes", () => {
  it("another workspace cannot read them", async () => {
    const trace = "trace-rerank-cohere";
    const own = await logOf(trace);
    const list = await call(gateway, keyB, "GET", `/v1/logs?trace_id=${trace}`);
    expect(list.status).toBe(200);
    expect(list.body.data).toEqual([]);
    const one = await call(gateway, keyB, "GET", `/v1/logs/${own.id}`);
    expect(one.status).toBe(404);
  });
});
