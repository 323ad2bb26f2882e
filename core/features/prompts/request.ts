import * as z from "zod/mini";
import { badRequest } from "../../http/errors.ts";
import "../../http/zod-mini.ts";

/**
 * The body of `POST /v1/prompts/:id/render` and `/completions` (spec 4.4; the portkey-ai SDK sends the same body
 * to both): `variables` (strings: a JSON value is serialised by the client), `stream`, and any hyperparameter at
 * the root, overriding the template's. `promptID` is the SDK's own field (it sends it to /render, as `prompt_id`): the path names the prompt. zod/mini: the
 * completions route is on the data plane.
 */

export const PROMPT_REQUEST_LIMITS = { variables: 256, variableName: 256 } as const;

const variableValue = z.string({ error: "must be a string (serialise a JSON value before sending it)" });

export const promptRequest = z.looseObject({
  variables: z.optional(
    z
      .record(z.string().check(z.maxLength(PROMPT_REQUEST_LIMITS.variableName)), variableValue)
      .check(
        z.refine(
          (value) => Object.keys(value).length <= PROMPT_REQUEST_LIMITS.variables,
          `at most ${PROMPT_REQUEST_LIMITS.variables} variables`,
        ),
      ),
  ),
  stream: z.optional(z.boolean()),
  promptID: z.optional(z.string()),
  prompt_id: z.optional(z.string()),
});

export interface PromptRequest {
  variables: Record<string, string>;
  stream?: boolean;
  /** Hyperparameters (and `model`) that override the template's. */
  overrides: Record<string, unknown>;
}

/** What the template supplies and a request cannot replace. */
const TEMPLATE_FIELDS = ["messages", "prompt"];

export function splitPromptRequest(body: z.infer<typeof promptRequest>): PromptRequest {
  const { variables = {}, stream, promptID: _promptId, prompt_id: _promptIdSnake, ...overrides } = body;
  for (const field of TEMPLATE_FIELDS) {
    if (Object.hasOwn(overrides, field)) {
      throw badRequest(
        `'${field}' comes from the saved prompt's template; send its variables in 'variables'.`,
        field,
        "invalid_value",
      );
    }
  }
  return { variables, stream, overrides };
}
