import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/ocr.ts";
import { family } from "../core/routes/table/ocr.ts";

/** Lambda entry point of the 'ocr' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
