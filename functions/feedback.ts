import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/feedback.ts";
import { family } from "../core/routes/table/feedback.ts";

/** Lambda entry point of the 'feedback' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
