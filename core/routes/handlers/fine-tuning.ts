import { fineTuningHandlers } from "../../features/fine-tuning/handlers.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = fineTuningHandlers;
