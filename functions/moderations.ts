import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/moderations.ts";
import { family } from "../core/routes/table/moderations.ts";

/** Lambda entry point of the 'moderations' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
