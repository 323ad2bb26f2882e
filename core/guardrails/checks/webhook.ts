import * as z from "zod";
import { HOP_HEADERS, HTTP_TOKEN } from "../../http/gateway-headers.ts";
import { isPlainObject } from "../../routing/query.ts";
import { type CheckDefinition, type CheckInput, MAX_CHECK_TIMEOUT_MS } from "../types.ts";
import { partsCost } from "../budget.ts";
import { phaseTexts, textsRouteOf } from "../texts.ts";
import { webhookPayload } from "./webhook-payload.ts";

/**
 * `default.webhook` (Portkey's parameter names): POSTs the request (and on output the answer) to a webhook of
 * the guardrail's author (webhook-payload.ts) and takes its verdict: `{"verdict": true|false}`, optionally
 * with Portkey's `transformedData.request.json` (input) or `.response.json` (output), a rewritten body whose
 * texts replace the phase's texts when the verdict is true.
 *
 * The call goes through `env.postJson`, which applies the custom-host rules (no private addresses unless
 * trusted) and sends only the `headers` given here, never the request's. A failed call (network, timeout,
 * a status other than 2xx, an answer without a boolean verdict) follows `failOnError`, as in Portkey:
 * absent, it is an error and the guardrail's `on_error` decides (open by default: it passes); `true` fails
 * the check; `false` passes it. Either way the explanation says what went wrong.
 */

export const DEFAULT_WEBHOOK_TIMEOUT_MS = 3_000;
const MAX_HEADERS = 20;
const MAX_HEADER_VALUE = 4_096;
/** Header values are sent as they are: a line break would start another header. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** The webhook's own `data` is kept in the verdict up to this size (serialised); larger, only its size is. */
const MAX_WEBHOOK_DATA = 2_048;

const headerMap = z.record(z.string(), z.string()).superRefine((headers, context) => {
  const names = Object.keys(headers);
  if (names.length > MAX_HEADERS) context.addIssue({ code: "custom", message: `at most ${MAX_HEADERS} headers` });
  for (const name of names) {
    const problem = !HTTP_TOKEN.test(name)
      ? "is not a header name"
      : HOP_HEADERS.has(name.toLowerCase())
        ? "is set by the gateway"
        : headers[name]!.length > MAX_HEADER_VALUE || !HEADER_VALUE.test(headers[name]!)
          ? `must be at most ${MAX_HEADER_VALUE} printable characters on one line`
          : undefined;
    if (problem) context.addIssue({ code: "custom", path: [name], message: `header '${name}' ${problem}` });
  }
});

const parameters = z.object({
  webhookURL: z
    .string()
    .trim()
    .max(2_048)
    .refine((url) => URL.canParse(url) && /^https?:$/.test(new URL(url).protocol), "expected an http(s) URL")
    .refine(
      (url) => !URL.canParse(url) || (!new URL(url).username && !new URL(url).password),
      "credentials go in headers, not in the URL",
    ),
  /** An object, or (as Portkey's UI stores it) its JSON text. */
  headers: z.preprocess(parseJsonHeaders, headerMap).optional(),
  timeout: z.number().int().min(1).max(MAX_CHECK_TIMEOUT_MS).default(DEFAULT_WEBHOOK_TIMEOUT_MS),
  failOnError: z.boolean().optional(),
});

type Parameters = z.infer<typeof parameters>;

function parseJsonHeaders(value: unknown, context: z.RefinementCtx): unknown {
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    context.addIssue({ code: "custom", message: "headers must be a JSON object of header names and values" });
    return z.NEVER;
  }
}

/** A webhook call that failed: its message says how, without the URL (which may hold a token). */
class WebhookError extends Error {}

export const webhook: CheckDefinition<Parameters> = {
  id: "default.webhook",
  description:
    "POSTs the request (and on output the answer) to a webhook, which answers {verdict} and may rewrite the texts.",
  parameters,
  // About what it sends: the request's texts (in its JSON) and the judged text.
  cost: (input) => partsCost(input) + input.text.length,
  // A webhook may answer a rewrite (Portkey's transformedData): it runs before the other checks, in order.
  rewrites: () => true,
  async run(input, params) {
    const what = input.phase === "input" ? "request" : "answer";
    let answer: WebhookAnswer;
    let transformedParts: string[] | undefined;
    try {
      const { status, json } = await input.env.postJson(params.webhookURL, webhookPayload(input), {
        headers: params.headers,
        timeoutMs: params.timeout,
        signal: input.signal,
      });
      answer = readAnswer(status, json);
      // A refusal's rewrite is not applied: the verdict of a rewrite is true.
      if (answer.verdict) transformedParts = rewrittenParts(input, answer);
    } catch (error) {
      // The check's own time limit or the client leaving is the runner's to report, whatever failOnError says.
      if (input.signal.aborted || params.failOnError === undefined) throw error;
      const reason = error instanceof WebhookError ? error.message : `the webhook call failed (${errorName(error)})`;
      return {
        verdict: !params.failOnError,
        explanation: `${capitalised(reason)}: the check ${params.failOnError ? "fails" : "passes"} (failOnError).`,
        data: { error: reason },
      };
    }

    const data = webhookData(answer.data);
    if (!answer.verdict) return { verdict: false, explanation: `The webhook refused the ${what}.`, data };
    if (!transformedParts) return { verdict: true, explanation: `The webhook passed the ${what}.`, data };
    return { verdict: true, explanation: `The webhook rewrote the ${what}.`, data, transformedParts };
  },
};

interface WebhookAnswer {
  verdict: boolean;
  data?: unknown;
  transformedData?: { request?: { json?: unknown }; response?: { json?: unknown } };
}

function readAnswer(status: number, json: unknown): WebhookAnswer {
  if (status < 200 || status > 299) throw new WebhookError(`the webhook answered HTTP ${status}`);
  if (!isPlainObject(json) || typeof json.verdict !== "boolean")
    throw new WebhookError('the webhook\'s answer has no boolean "verdict"');
  return json as unknown as WebhookAnswer;
}

/** The phase's texts as the webhook rewrote them; undefined when it sent no rewrite or one that changes nothing. */
function rewrittenParts(input: CheckInput, answer: WebhookAnswer): string[] | undefined {
  const body = input.phase === "input" ? answer.transformedData?.request?.json : answer.transformedData?.response?.json;
  if (body === undefined || body === null) return undefined;
  if (!isPlainObject(body)) throw new WebhookError("the webhook's transformedData is not a JSON object");
  const texts = phaseTexts(textsRouteOf(input), input.phase, body).parts;
  if (texts.length !== input.parts.length) {
    throw new WebhookError(
      `the webhook's rewrite has ${texts.length} texts where the ${input.phase} has ${input.parts.length}: ` +
        "a rewrite may change texts, not add or remove them",
    );
  }
  return texts.some((text, index) => text !== input.parts[index]) ? texts : undefined;
}

function webhookData(data: unknown): Record<string, unknown> {
  if (data === undefined) return {};
  const size = JSON.stringify(data)?.length ?? 0;
  return size <= MAX_WEBHOOK_DATA ? { webhook_data: data } : { webhook_data_size: size };
}

/** How a call failed, for the verdict: URLs in it are cut to their origin (a webhook's path may hold a token). */
function errorName(error: unknown): string {
  if (!(error instanceof Error)) return "unknown error";
  const message = error.message.replace(/https?:\/\/[^\s/'"]+[^\s'"]*/g, (url) =>
    URL.canParse(url) ? new URL(url).origin : "the webhook URL",
  );
  return `${error.name}: ${message}`.slice(0, 200);
}

const capitalised = (text: string) => text[0]!.toUpperCase() + text.slice(1);
