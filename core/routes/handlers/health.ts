import type { HandlerMap } from "../../http/context.ts";
import { json } from "../../http/json.ts";

export const handlers: HandlerMap = {
  async health() {
    return json({ status: "ok" });
  },

  /** The OpenAPI document, loaded on first use so the health check's cold start does not pay for the schemas. */
  async openApi() {
    const { openApiJson } = await import("../openapi/document.ts");
    return new Response(openApiJson(), { headers: { "content-type": "application/json" } });
  },
};
