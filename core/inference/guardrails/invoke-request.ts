import * as z from "zod/mini";
import { chatMessage } from "../gateway/schemas/chat.ts";
import { modelName } from "../gateway/schemas/common.ts";
import "../../http/zod-mini.ts";

/**
 * The body of `POST /v1/guardrails/:id/invoke`: what to judge (`input`: a text, or chat messages), the phase
 * to judge it as (`input` by default: a request's messages; `output`: an answer, the last message when
 * messages are given), and optionally the model and metadata the checks see. zod/mini: the route is on the
 * data plane, whose functions must not load classic zod at init.
 */

export const INVOKE_LIMITS = { messages: 2048, metadataPairs: 16, metadataKey: 64, metadataValue: 512 } as const;

const metadata = z
  .record(
    z.string().check(z.maxLength(INVOKE_LIMITS.metadataKey)),
    z.string().check(z.maxLength(INVOKE_LIMITS.metadataValue)),
  )
  .check(
    z.refine(
      (value) => Object.keys(value).length <= INVOKE_LIMITS.metadataPairs,
      `at most ${INVOKE_LIMITS.metadataPairs} metadata pairs`,
    ),
  );

export const guardrailInvokeRequest = z.strictObject({
  input: z.union([
    z.string(),
    z
      .array(chatMessage)
      .check(
        z.minLength(1, "input must hold at least one message"),
        z.maxLength(INVOKE_LIMITS.messages, `at most ${INVOKE_LIMITS.messages} messages`),
      ),
  ]),
  phase: z.optional(z.enum(["input", "output"])),
  model: z.optional(modelName),
  metadata: z.optional(metadata),
});

export type GuardrailInvokeRequest = z.infer<typeof guardrailInvokeRequest>;
