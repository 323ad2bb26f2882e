import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/responses.ts";

/** Lambda entry point of the 'responses' route family (infra/api.ts). */
export const handler = createLambdaHandler("responses", handlers);
