import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/guardrail-invoke.ts";

/** Lambda entry point of the 'guardrail-invoke' route family (infra/api.ts). */
export const handler = createLambdaHandler("guardrail-invoke", handlers);
