import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/models.ts";
import { family } from "../core/routes/table/models.ts";

/** Lambda entry point of the 'models' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
