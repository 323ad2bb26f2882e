import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/assistants.ts";
import { family } from "../core/routes/table/assistants.ts";

/** Lambda entry point of the 'assistants' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
