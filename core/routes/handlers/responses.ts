import type { HandlerMap } from "../../http/context.ts";
import { createResponse } from "../../responses/create-response.ts";
import { storedResponseHandlers } from "../../responses/stored-handlers.ts";

export const handlers: HandlerMap = {
  createResponse,
  ...storedResponseHandlers,
};
