import { describe, expect, it } from "vitest";
import { Conflict, Forbidden, Gone, Invalid, NotFound } from "../../../core/control/errors.ts";
import type { RequestContext } from "../../../core/http/context.ts";
import { httpErrorOf, mapDomainErrors } from "../../../core/http/domain-errors.ts";
import { HttpError, errorResponse } from "../../../core/http/errors.ts";

/** The one mapping from control-plane domain errors to HTTP answers in OpenAI's error shape. */

describe("domain errors to HTTP", () => {
  it("maps each kind to its status and error type, keeping message, param and code", () => {
    const cases = [
      [new Invalid("bad slug", { param: "slug" }), 400, "invalid_request_error", null],
      [new Forbidden("not yours", { code: "admin_required" }), 403, "permission_error", "admin_required"],
      [new NotFound("no such thing"), 404, "not_found_error", "not_found"],
      [new Conflict("taken", { param: "email" }), 409, "conflict_error", "conflict"],
      [new Gone("used", { param: "token", code: "invite_accepted" }), 410, "invalid_request_error", "invite_accepted"],
    ] as const;
    for (const [error, status, type, code] of cases) {
      const http = httpErrorOf(error);
      expect(http.status, error.kind).toBe(status);
      expect(http.body()).toEqual({ error: { message: error.message, type, param: error.param, code } });
    }
  });

  it("handler maps answer domain errors as HTTP errors and leave other errors to the app", async () => {
    const boom = new Error("internal");
    const handlers = mapDomainErrors({
      domain: async () => {
        throw new NotFound("No workspace 'x'.", { code: "workspace_not_found" });
      },
      other: async () => {
        throw boom;
      },
      fine: async () => new Response("ok"),
    });
    const ctx = {} as RequestContext;
    const request = new Request("http://gateway.test/");
    const mapped = await handlers.domain!(request, ctx).catch((error: unknown) => error);
    expect(mapped).toBeInstanceOf(HttpError);
    const response = errorResponse(mapped as HttpError);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: "workspace_not_found" } });
    await expect(handlers.other!(request, ctx)).rejects.toBe(boom);
    expect(await (await handlers.fine!(request, ctx)).text()).toBe("ok");
  });
});
