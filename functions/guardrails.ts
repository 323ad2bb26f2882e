import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/guardrails.ts";
import { family } from "../core/routes/table/guardrails.ts";

/** Lambda entry point of the 'guardrails' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
