import * as z from "zod";
import { logitBias, n, penalty, seed, stop, streamOptions, temperature, topP, user } from "./common.ts";

/** POST /v1/completions (spec 4.3). */
export const completionRequest = z
  .looseObject({
    model: z.string().min(1),
    prompt: z.union([z.string(), z.array(z.string()), z.array(z.number().int()), z.array(z.array(z.number().int()))]),
    best_of: z.number().int().min(0).max(20).nullable().optional(),
    echo: z.boolean().nullable().optional(),
    frequency_penalty: penalty.nullable().optional(),
    presence_penalty: penalty.nullable().optional(),
    logit_bias: logitBias.nullable().optional(),
    logprobs: z.number().int().min(0).max(5).nullable().optional(),
    max_tokens: z.number().int().min(0).nullable().optional(),
    n: n.nullable().optional(),
    seed: seed.nullable().optional(),
    stop: stop.optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: streamOptions.optional(),
    suffix: z.string().nullable().optional(),
    temperature: temperature.nullable().optional(),
    top_p: topP.nullable().optional(),
    user: user.optional(),
  })
  .superRefine((body, ctx) => {
    if (body.best_of != null) {
      const count = body.n ?? 1;
      // best_of 1 with n 1 is OpenAI's documented default and means "no extra candidates".
      if (body.best_of <= count && !(body.best_of === 1 && count === 1)) {
        ctx.addIssue({ code: "custom", path: ["best_of"], message: "best_of must be greater than n" });
      }
      if (body.stream)
        ctx.addIssue({ code: "custom", path: ["best_of"], message: "best_of cannot be used with stream" });
    }
    if (body.stream_options && body.stream !== true) {
      ctx.addIssue({
        code: "custom",
        path: ["stream_options"],
        message: "stream_options is only allowed when stream is true",
      });
    }
  });

export type CompletionRequest = z.infer<typeof completionRequest>;
