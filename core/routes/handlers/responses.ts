import type { HandlerMap } from "../../http/context.ts";
import { createResponse } from "../../responses/create-response.ts";
import { storedResponseHandlers } from "./stored-responses.ts";

export const handlers: HandlerMap = {
  createResponse,
  ...storedResponseHandlers,
};
