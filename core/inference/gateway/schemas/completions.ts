import * as z from "zod/mini";
import { int } from "../../../http/zod-mini.ts";
import {
  checkStreamOptions,
  logitBias,
  modelName,
  n,
  penalty,
  seed,
  stop,
  streamOptions,
  temperature,
  topP,
  user,
} from "./common.ts";

/** POST /v1/completions (spec 4.3). */
export const completionRequest = z
  .looseObject({
    model: modelName,
    prompt: z.union([z.string(), z.array(z.string()), z.array(int()), z.array(z.array(int()))]),
    best_of: z.nullish(int(z.minimum(0), z.maximum(20))),
    echo: z.nullish(z.boolean()),
    frequency_penalty: z.nullish(penalty),
    presence_penalty: z.nullish(penalty),
    logit_bias: z.nullish(logitBias),
    logprobs: z.nullish(int(z.minimum(0), z.maximum(5))),
    max_tokens: z.nullish(int(z.minimum(0))),
    n: z.nullish(n),
    seed: z.nullish(seed),
    stop: z.optional(stop),
    stream: z.nullish(z.boolean()),
    stream_options: z.optional(streamOptions),
    suffix: z.nullish(z.string()),
    temperature: z.nullish(temperature),
    top_p: z.nullish(topP),
    user: z.optional(user),
  })
  .check(
    z.superRefine((body, ctx) => {
      if (body.best_of != null) {
        const count = body.n ?? 1;
        // best_of 1 with n 1 is OpenAI's documented default and means "no extra candidates".
        if (body.best_of <= count && !(body.best_of === 1 && count === 1)) {
          ctx.addIssue({ code: "custom", path: ["best_of"], message: "best_of must be greater than n" });
        }
        if (body.stream)
          ctx.addIssue({ code: "custom", path: ["best_of"], message: "best_of cannot be used with stream" });
      }
      checkStreamOptions(body, ctx);
    }),
  );
