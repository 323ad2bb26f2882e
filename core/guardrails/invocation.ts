import type { RequestContext } from "../http/context.ts";
import { GuardrailBudget } from "./budget.ts";
import { checkEnvironment } from "./check-environment.ts";
import type { GuardrailInvokeRequest } from "./invoke-request.ts";
import { runGuardrail } from "./runner.ts";
import { recordGuardrailSpans } from "./spans.ts";
import type { CheckInput, CheckVerdict, GuardrailDefinition, GuardrailPhase } from "./types.ts";

/**
 * `POST /v1/guardrails/:id/invoke`: one saved guardrail's checks over a text or chat messages, without any
 * model call. Every enabled check runs (an async guardrail's too: the caller asked for the verdict), rewriting
 * checks first as in a request. Loaded on the route's first call: it brings the runner and the checks.
 */

type Message = Record<string, unknown> & { content?: unknown };

export interface Invocation {
  object: "guardrail.invocation";
  guardrail_id: string;
  phase: GuardrailPhase;
  /** true when every enabled check passed. */
  verdict: boolean;
  /** Whether a request would have been refused: the guardrail failed and has `deny`. */
  denied: boolean;
  checks: CheckVerdict[];
  /** The input as redacting checks rewrote it, in the shape it came in. */
  transformed?: { text: string } | { messages: Message[] };
}

export async function invokeGuardrail(
  request: Request,
  ctx: RequestContext,
  definition: GuardrailDefinition,
  body: GuardrailInvokeRequest,
): Promise<Invocation> {
  const phase = body.phase ?? "input";
  const judged = judgedInput(body, phase);
  const input: Omit<CheckInput, "signal"> = {
    ...judged.input,
    model: body.model ?? "",
    metadata: body.metadata ?? ctx.gateway?.metadata ?? {},
    headers: request.headers,
    env: checkEnvironment(request, ctx),
  };
  const run = await runGuardrail(definition, input, ctx.signal, {
    budget: new GuardrailBudget(ctx.services.settings.GATEWAY_GUARDRAIL_BUDGET_CHARS),
    threads: ctx.services.guardrailThreads,
  });
  const { verdict } = run;
  if (ctx.principal) {
    recordGuardrailSpans([verdict], {
      traceId: ctx.traceId,
      organisationId: ctx.principal.organisationId,
      workspaceId: ctx.principal.workspaceId,
      settings: ctx.services.settings,
    });
  }
  const answer: Invocation = {
    object: "guardrail.invocation",
    guardrail_id: definition.id,
    phase,
    verdict: verdict.verdict,
    denied: !verdict.verdict && verdict.deny,
    checks: verdict.checks,
  };
  // A rewriting check may hand the texts back unchanged: only an actual change is reported.
  if (run.transformedParts && verdict.transformed) answer.transformed = judged.rebuild(run.transformedParts);
  return answer;
}

/** A text segment of the messages: its message, and its index in an array of content parts (absent: a string content). */
interface Slot {
  message: number;
  part?: number;
}

interface Judged {
  input: Pick<CheckInput, "phase" | "route" | "text" | "parts" | "request" | "response">;
  rebuild(parts: string[]): NonNullable<Invocation["transformed"]>;
}

/**
 * What the checks judge, shaped as in a chat request: on input, the messages (a text is one user message);
 * on output, the answer (a text, or the last message) as the first choice of a chat completion, after the
 * messages before it.
 */
function judgedInput(body: GuardrailInvokeRequest, phase: GuardrailPhase): Judged {
  const model = body.model ?? "";
  if (typeof body.input === "string") {
    const text = body.input;
    const messages = phase === "input" ? [{ role: "user", content: text }] : [];
    return {
      input: {
        phase,
        route: "chat",
        text,
        parts: [text],
        request: { model, messages },
        ...(phase === "output" ? { response: completionOf(model, { role: "assistant", content: text }) } : {}),
      },
      rebuild: (parts) => ({ text: parts[0] ?? "" }),
    };
  }
  const messages = body.input as Message[];
  // On output only the answer (the last message) is judged; on input every message.
  const first = phase === "output" ? messages.length - 1 : 0;
  const { parts, slots } = textsOf(messages, first);
  return {
    input: {
      phase,
      route: "chat",
      text: parts.at(-1) ?? "",
      parts,
      request: { model, messages: phase === "output" ? messages.slice(0, -1) : messages },
      ...(phase === "output" ? { response: completionOf(model, messages.at(-1)!) } : {}),
    },
    rebuild: (rewritten) => ({ messages: writtenBack(messages, slots, rewritten) }),
  };
}

function completionOf(model: string, message: Message): Record<string, unknown> {
  return {
    object: "chat.completion",
    model,
    choices: [{ index: 0, message, finish_reason: "stop" }],
  };
}

/** Every text of the messages from `first` on, in order: string contents and `text` parts. */
function textsOf(messages: Message[], first: number): { parts: string[]; slots: Slot[] } {
  const parts: string[] = [];
  const slots: Slot[] = [];
  for (let index = first; index < messages.length; index++) {
    const content = messages[index]!.content;
    if (typeof content === "string") {
      parts.push(content);
      slots.push({ message: index });
    } else if (Array.isArray(content)) {
      content.forEach((part: unknown, partIndex) => {
        const text = (part as { type?: unknown; text?: unknown }).text;
        if ((part as { type?: unknown }).type === "text" && typeof text === "string") {
          parts.push(text);
          slots.push({ message: index, part: partIndex });
        }
      });
    }
  }
  return { parts, slots };
}

/** The messages with each text slot replaced by its rewrite (copies: the request's body is left as it came). */
function writtenBack(messages: Message[], slots: Slot[], rewritten: string[]): Message[] {
  const out = messages.map((message) =>
    Array.isArray(message.content) ? { ...message, content: [...message.content] } : { ...message },
  );
  slots.forEach((slot, index) => {
    const text = rewritten[index]!;
    const message = out[slot.message]!;
    if (slot.part === undefined) message.content = text;
    else {
      const content = message.content as Record<string, unknown>[];
      content[slot.part] = { ...content[slot.part], text };
    }
  });
  return out;
}
