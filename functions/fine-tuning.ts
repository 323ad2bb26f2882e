import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/fine-tuning.ts";
import { family } from "../core/routes/table/fine-tuning.ts";

/** Lambda entry point of the 'fine-tuning' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
