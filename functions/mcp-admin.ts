import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/mcp-admin.ts";
import { family } from "../core/routes/table/mcp-admin.ts";

/** Lambda entry point of the 'mcp-admin' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
