import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/users.ts";
import { family } from "../core/routes/table/users.ts";

/** Lambda entry point of the 'users' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
