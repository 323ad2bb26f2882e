import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers as invoke } from "../core/routes/handlers/guardrail-invoke.ts";
import { handlers } from "../core/routes/handlers/guardrails.ts";

/** Lambda entry point of the 'guardrails' route family (infra/api.ts): the CRUD routes and invoke. */
export const handler = createLambdaHandler("guardrails", { ...handlers, ...invoke });
