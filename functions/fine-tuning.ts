import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/fine-tuning.ts";

/** Lambda entry point of the 'fine-tuning' route family (infra/api.ts). */
export const handler = createLambdaHandler("fine-tuning", handlers);
