import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/mcp.ts";
import { family } from "../core/routes/table/mcp.ts";

/** Lambda entry point of the 'mcp' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
