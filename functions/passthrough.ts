import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/passthrough.ts";
import { family } from "../core/routes/table/passthrough.ts";

/** Lambda entry point of the 'passthrough' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
