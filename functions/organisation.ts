import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/organisation.ts";
import { family } from "../core/routes/table/organisation.ts";

/** Lambda entry point of the 'organisation' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
