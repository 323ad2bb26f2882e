import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/audio.ts";
import { family } from "../core/routes/table/audio.ts";

/** Lambda entry point of the 'audio' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
