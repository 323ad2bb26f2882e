import * as z from "zod";
import { isPlainObject } from "../../routing/query.ts";
import type { CheckInput } from "../types.ts";

/**
 * What the checks that ask a model (default.moderation, default.modelGraded) share: the `config` parameter
 * naming what to call, and the call itself, a sub-request through the gateway's own pipeline (`env.infer`),
 * so routing, credentials, retries, cost and the request log apply to it as to any request.
 */

/** A saved config's id or slug, or an inline routing config (compiled by `env.infer`, like a config header). */
const CONFIG_SHAPE = "expected a saved config's id or slug, or an inline routing config object";

export const configParameter = z.union(
  [
    z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, CONFIG_SHAPE),
    z.record(z.string(), z.unknown()).refine((config) => Object.keys(config).length > 0, "the config is empty"),
  ],
  { error: CONFIG_SHAPE },
);

/** A model name as providers take it (`omni-moderation-latest`, `gpt-4o-mini`, `@openai/gpt-4o`...). */
export const modelParameter = z
  .string()
  .trim()
  .min(1)
  .max(256)
  .regex(/^[\x21-\x7e]+$/, "expected a model name");

/** Calls the pipeline and answers the JSON of a 200; anything else is an error naming the status (and code). */
export async function inferJson(
  input: CheckInput,
  route: "chat" | "moderations",
  body: Record<string, unknown>,
  config: string | Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const { status, json } = await input.env.infer(route, body, config, input.signal);
  if (status !== 200) {
    const error = isPlainObject(json) && isPlainObject(json.error) ? json.error : {};
    const code = typeof error.code === "string" ? error.code : typeof error.type === "string" ? error.type : undefined;
    // Only the status and the error's code: a provider's message may quote what it was sent.
    throw new Error(`the ${route} call answered HTTP ${status}${code ? ` (${code.slice(0, 100)})` : ""}`);
  }
  if (!isPlainObject(json)) throw new Error(`the ${route} call answered something other than a JSON object`);
  return json;
}
