import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/users.ts";

/** Lambda entry point of the 'users' route family (infra/api.ts). */
export const handler = createLambdaHandler("users", handlers);
