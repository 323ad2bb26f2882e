import type { HandlerMap } from "../../http/context.ts";
import { json } from "../../http/json.ts";

export const handlers: HandlerMap = {
  async health() {
    return json({ status: "ok" });
  },
};
