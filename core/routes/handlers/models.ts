import { listModels } from "../../inference/gateway/models.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = { listModels };
