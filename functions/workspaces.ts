import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/workspaces.ts";
import { family } from "../core/routes/table/workspaces.ts";

/** Lambda entry point of the 'workspaces' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
