import * as z from "zod";
import type { CheckDefinition } from "../types.ts";
import { readsNoText } from "../budget.ts";
import { listExplanation, listOperator, listVerdict } from "./list-operator.ts";

/**
 * `default.requiredMetadataKeys`: looks for keys in the request's metadata (`x-gateway-metadata`). `operator`
 * `all` (default), `any` or `none`. Input phase, as Portkey's. Only the keys are named in the verdict, never the
 * metadata's values.
 */

const parameters = z.object({
  metadataKeys: z.array(z.string().min(1).max(200)).min(1).max(100),
  operator: listOperator.default("all"),
});

type Parameters = z.infer<typeof parameters>;

export const requiredMetadataKeys: CheckDefinition<Parameters> = {
  id: "default.requiredMetadataKeys",
  description: "Passes when all (default), any or none of the given keys are in the request's metadata.",
  phases: ["input"],
  parameters,
  cost: readsNoText,
  selfContained: () => true,
  run(input, { metadataKeys, operator }) {
    const present = metadataKeys.filter((key) => Object.hasOwn(input.metadata, key));
    const missing = metadataKeys.filter((key) => !Object.hasOwn(input.metadata, key));
    const verdict = listVerdict(operator, present.length, missing.length);
    const noun = metadataKeys.length === 1 ? "metadata key" : "metadata keys";
    return {
      verdict,
      explanation: listExplanation(operator, verdict, present.length, metadataKeys.length, noun),
      data: { operator, present_keys: present, missing_keys: missing },
    };
  },
};
