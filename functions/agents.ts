import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/agents.ts";

/** Lambda entry point of the 'agents' route family (infra/api.ts). */
export const handler = createLambdaHandler("agents", handlers);
