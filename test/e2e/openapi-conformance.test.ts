import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installedVersion, recordConformance } from "../helpers/conformance-page.ts";
import { createKey, seedWorkspace } from "../helpers/control.ts";
import { type CheckResult, type ExpectedFailure, tallyChecks } from "../helpers/expected-failures.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { sendJson, startMockServer } from "../helpers/mock-server.ts";
import { openAISchemaOfRequest, validatingFetch } from "../helpers/openai-schema.ts";
import { FAMILIES, type Family, type FamilyTarget } from "./openapi-conformance/cases.ts";
import { startUpstreams, type Upstreams } from "./openapi-conformance/upstreams.ts";

/**
 * OpenAI's published OpenAPI document (../shared/openai-openapi/openapi.json) as the measure of every OpenAI-shaped
 * answer: the openai SDK drives the gateway through a fixed list of cases (chat completions JSON and streamed, with
 * tool calls and usage; completions; embeddings; moderations; the model list; files; batches; responses JSON and
 * streamed) on OpenAI natively and on every provider the gateway translates or relays that family for, each
 * against a mock upstream speaking that provider's wire format. Each JSON answer and stream event the client reads
 * is validated against the document's schema for its route (test/helpers/openai-schema.ts, with only the
 * relaxations it names). One check per (case, target); the counts go to docs/conformance.md, and a failing check
 * must be listed below with its reason.
 */

const SUITE = "OpenAI OpenAPI validation of OpenAI-shaped answers";
/** Known failures (`case@target`), each with what its errors must match and why. */
const EXPECTED_FAILURES: ExpectedFailure[] = [
  {
    cases: /^completion stream@/,
    errors:
      /^CreateCompletionResponse \/choices\/0\/finish_reason must be (string|equal to one of the allowed values)$/,
    reason:
      "A legacy completions stream chunk has CreateCompletionResponse's shape (OpenAI's reference says the two " +
      "share it), whose choice's finish_reason is a non-null string; OpenAI's live stream sends " +
      "`finish_reason: null` on every chunk but the last, and the gateway relays the upstream's chunks as they " +
      "are. openai-schema.ts names no relaxation for it (its chat-chunk one covers chat chunks only).",
  },
];

let gateway: TestGateway;
let upstreams: Upstreams;
let workspaceKey: string;

beforeAll(async () => {
  // The batch worker and sweep are driven by the batch cases (runBatchToEnd), so each step is deterministic.
  [gateway, upstreams] = await Promise.all([startTestGateway({ GATEWAY_WORKER_POLL_MS: "600000" }), startUpstreams()]);
  const workspace = await seedWorkspace(gateway, "OpenAPI conformance");
  workspaceKey = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "openapi-conformance",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await upstreams?.close();
});

/** What one check's client validated: how many answers and events, and their schema problems. */
interface Validated {
  count: number;
  problems: Set<string>;
}

/** An openai client routed to `target` whose fetch validates every answer into `validated`. */
function checkingClient(target: FamilyTarget, validated: Validated): OpenAI {
  const routing = target.upstream ? upstreams.routing[target.upstream] : undefined;
  return new OpenAI({
    apiKey: routing?.apiKey ?? "unused",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": workspaceKey, ...routing?.headers, ...target.headers },
    maxRetries: 0,
    timeout: 15_000,
    fetch: validatingFetch(openAISchemaOfRequest, (name, errors) => {
      validated.count++;
      for (const error of errors) validated.problems.add(`${name} ${error}`);
    }),
  });
}

/** Runs a family's cases in order on one target; each check's id and problems (none when it passed). */
async function runFamily(family: Family, target: FamilyTarget): Promise<CheckResult[]> {
  const state: Record<string, string> = {};
  const results: CheckResult[] = [];
  for (const [name, run] of Object.entries(family.cases)) {
    const validated: Validated = { count: 0, problems: new Set() };
    const client = checkingClient(target, validated);
    const errors = await run({ client, model: target.model, gateway, state }).catch((error: Error) => [
      `${error.constructor.name}: ${error.message}`,
    ]);
    if (validated.count === 0) errors.push("no answer was validated");
    results.push({ id: `${name}@${target.name}`, errors: [...validated.problems, ...errors] });
  }
  return results;
}

describe("OpenAI OpenAPI validation of the gateway's OpenAI-shaped answers", () => {
  it("every case on every target validates, but for its explained failures", { timeout: 300_000 }, async () => {
    const checks: CheckResult[] = [];
    // A target whose upstream heard nothing measured the gateway alone, not that provider.
    const unreached: string[] = [];
    for (const family of FAMILIES) {
      for (const target of family.targets) {
        const before = target.upstream ? upstreams.requestsTo(target.upstream) : 0;
        checks.push(...(await runFamily(family, target)));
        if (target.upstream && upstreams.requestsTo(target.upstream) === before) {
          unreached.push(`${family.name}@${target.name}`);
        }
      }
    }
    const { passed, failures, expected, stale } = tallyChecks(checks, EXPECTED_FAILURES);
    expect(failures).toEqual([]);
    expect(unreached, "targets whose upstream was never called").toEqual([]);
    expect(stale, "expected failures that now pass: narrow or remove them").toEqual([]);
    const measured = {
      version: `openai ${installedVersion("openai")}`,
      passed,
      failed: failures.length,
      expectedFailures: expected.length,
    };
    const committed = recordConformance({ suite: SUITE, requirements: "openapi.json", ...measured });
    expect(committed, "docs/conformance.md was regenerated with these counts: commit it").toEqual(measured);
  });
});

describe("the suite's own measure", () => {
  it("fails a check whose answer breaks OpenAI's schema, naming the problem", async () => {
    // An upstream whose chat completion has no `created` (a field the document requires), relayed as it is.
    const broken = await startMockServer((_request, response) =>
      sendJson(response, 200, {
        id: "chatcmpl-broken",
        object: "chat.completion",
        model: "gpt-4o-mini",
        choices: [
          {
            index: 0,
            message: { role: "assistant", content: "Hi", refusal: null },
            logprobs: null,
            finish_reason: "stop",
          },
        ],
      }),
    );
    try {
      const chat = FAMILIES.find((family) => family.name === "chat completions")!;
      const [check] = await runFamily(
        { ...chat, cases: { "chat completion": chat.cases["chat completion"]! } },
        {
          name: "broken upstream",
          model: "gpt-4o-mini",
          headers: { "x-gateway-provider": "openai", "x-gateway-custom-host": `${broken.url}/v1` },
        },
      );
      expect(check!.errors).toEqual(["CreateChatCompletionResponse / must have required property 'created'"]);
    } finally {
      await broken.close();
    }
  });
});
