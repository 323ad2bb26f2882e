import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/agents.ts";
import { family } from "../core/routes/table/agents.ts";

/** Lambda entry point of the 'agents' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
