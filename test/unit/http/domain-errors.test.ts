import { describe, expect, it } from "vitest";
import { Conflict, Forbidden, Gone, Invalid, NotFound, Unauthenticated } from "../../../core/control/errors.ts";
import { toHttpError } from "../../../core/http/app.ts";
import { httpErrorOf, throwingHttpErrors } from "../../../core/http/domain-errors.ts";
import { HttpError, errorResponse } from "../../../core/http/errors.ts";

/** The one mapping from domain errors to HTTP answers in OpenAI's error shape. */

describe("domain errors to HTTP", () => {
  it("maps each kind to its status and error type, keeping message, param and code", () => {
    const cases = [
      [new Unauthenticated("who?"), 401, "authentication_error", "invalid_api_key"],
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

  it("the app's toHttpError answers a thrown domain error through that mapping (no per-family wrapper)", async () => {
    const mapped = toHttpError(new NotFound("No workspace 'x'.", { code: "workspace_not_found" }), "trace-1");
    expect(mapped).toBeInstanceOf(HttpError);
    const response = errorResponse(mapped);
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: { message: "No workspace 'x'.", type: "not_found_error", param: null, code: "workspace_not_found" },
    });
  });

  it("throwingHttpErrors turns a seam's domain errors into HTTP errors and leaves other errors alone", async () => {
    const boom = new Error("store down");
    const seam = throwingHttpErrors(async (what: string) => {
      if (what === "domain") throw new NotFound("Unknown config 'x'.", { code: "config_not_found" });
      if (what === "other") throw boom;
      return "ok";
    });
    const mapped = await seam("domain").catch((error: unknown) => error);
    expect(mapped).toBeInstanceOf(HttpError);
    expect((mapped as HttpError).status).toBe(404);
    await expect(seam("other")).rejects.toBe(boom);
    expect(await seam("fine")).toBe("ok");
  });
});
